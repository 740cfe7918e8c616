/**
 * A loopback port where a TCP connect never completes, as with an endpoint whose SYNs are dropped (a pod
 * gone from a node, a firewall): a socket listening with a backlog of 0 that never accepts. Its accept
 * queue takes one connection (made here at once), after which Linux drops every SYN, so a client's
 * connect stays pending. Node and Bun accept whatever arrives, so the socket is made through libc.
 * Linux only (`available()` says whether it can be made here).
 */
import { dlopen, FFIType, ptr } from "bun:ffi";

const AF_INET = 2;
const SOCK_STREAM = 1;

function libc() {
  return dlopen("libc.so.6", {
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    bind: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    listen: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    getsockname: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
  });
}

export function unansweredPortAvailable(): boolean {
  if (process.platform !== "linux") return false;
  try {
    libc().close();
    return true;
  } catch {
    return false;
  }
}

export interface UnansweredPort {
  readonly port: number;
  close(): void;
}

/** Listens on 127.0.0.1 with a full accept queue; `close()` frees the port. */
export async function unansweredPort(): Promise<UnansweredPort> {
  const lib = libc();
  const c = lib.symbols;
  const fd = c.socket(AF_INET, SOCK_STREAM, 0);
  // struct sockaddr_in: family (host order), port and address (network order), zero padding.
  const addr = new Uint8Array(16);
  new DataView(addr.buffer).setUint16(0, AF_INET, true);
  addr.set([127, 0, 0, 1], 4);
  const len = new Uint32Array([16]);
  if (
    fd < 0 ||
    c.bind(fd, ptr(addr), 16) !== 0 ||
    c.listen(fd, 0) !== 0 ||
    c.getsockname(fd, ptr(addr), ptr(len)) !== 0
  ) {
    if (fd >= 0) c.close(fd);
    lib.close();
    throw new Error("could not make an unanswered port");
  }
  const port = new DataView(addr.buffer).getUint16(2, false);
  // The one connection the queue holds: from now on connects hang.
  const filler = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
  return {
    port,
    close() {
      filler.terminate();
      c.close(fd);
      lib.close();
    },
  };
}
