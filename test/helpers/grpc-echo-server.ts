/**
 * A stand-in for upstream's echo-basic in gRPC mode (`GRPC_ECHO_SERVER`, `conformance/echo-basic/grpc`):
 * plaintext gRPC (h2c) serving `GrpcEcho` from upstream's own proto (`grpcecho.proto` beside this file)
 * with @grpc/grpc-js, a real gRPC server library, so trailers and status codes are what a gRPC client
 * expects. Echo and EchoTwo answer with the method, every incoming metadata pair (`:authority` included, as
 * grpc-go exposes it) and the pod context; EchoThree is left unimplemented (code 12), as upstream's is.
 */
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";

export const grpcEchoService = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho";

/** The EchoResponse fields the conformance cases read (proto field names, as loaded with keepCase). */
export interface EchoResponse {
  readonly assertions?: {
    readonly fully_qualified_method: string;
    readonly headers: readonly { key: string; value: string }[];
    readonly authority: string;
    readonly context?: { namespace: string; ingress: string; service_name: string; pod: string } | null;
  } | null;
}

type Callback = (err: grpc.ServiceError | null, res?: EchoResponse) => void;
/** The generated client: one method per rpc, with grpc-js's (request, metadata, options, callback) form. */
export type GrpcEchoClient = grpc.Client &
  Record<
    string,
    (req: object, md: grpc.Metadata, options: grpc.CallOptions, cb: Callback) => grpc.ClientUnaryCall
  >;
type ClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => GrpcEchoClient;

let loaded: { service: grpc.ServiceDefinition; Client: ClientConstructor } | undefined;

/** The service definition and client constructor, loaded once from the proto. */
export function grpcEcho(): { service: grpc.ServiceDefinition; Client: ClientConstructor } {
  if (loaded) return loaded;
  const definition = loadSync(join(import.meta.dir, "grpcecho.proto"), { keepCase: true, defaults: true });
  let node: unknown = grpc.loadPackageDefinition(definition);
  for (const part of grpcEchoService.split(".")) node = (node as Record<string, unknown>)[part];
  const Client = node as ClientConstructor & { service: grpc.ServiceDefinition };
  loaded = { service: Client.service, Client };
  return loaded;
}

export interface GrpcEchoOptions {
  namespace?: string;
  ingress?: string;
  service?: string;
  pod?: string;
}

export interface GrpcEchoServer {
  readonly port: number;
  /** RPCs answered so far. */
  readonly calls: number;
  stop(): Promise<void>;
}

export async function startGrpcEchoServer(options: GrpcEchoOptions = {}): Promise<GrpcEchoServer> {
  const context = {
    namespace: options.namespace ?? "",
    ingress: options.ingress ?? "",
    service_name: options.service ?? "",
    pod: options.pod ?? "",
  };
  let calls = 0;
  const echo =
    (method: string) =>
    (call: grpc.ServerUnaryCall<object, EchoResponse>, callback: grpc.sendUnaryData<EchoResponse>) => {
      calls++;
      const authority = call.getHost();
      const headers = [{ key: ":authority", value: authority }];
      for (const [key, values] of Object.entries(call.metadata.toJSON()))
        for (const v of values) headers.push({ key, value: Buffer.isBuffer(v) ? v.toString("base64") : v });
      callback(null, {
        assertions: { fully_qualified_method: `/${grpcEchoService}/${method}`, headers, authority, context },
      });
    };
  const server = new grpc.Server();
  server.addService(grpcEcho().service, { Echo: echo("Echo"), EchoTwo: echo("EchoTwo") });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    port,
    get calls() {
      return calls;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        // tryShutdown waits for open calls; a client that never closes its channel must not hold us up.
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
