/**
 * The peers section's nginx in ingress-nginx's shape (peers.ts): what users leaving ingress-nginx run per
 * request, on Debian's nginx and its Lua module. Written after ingress-nginx's nginx.tmpl and its Lua
 * (balancer.lua, lua_ingress.lua, certificate.lua), not copied: one `upstream_balancer` with a placeholder
 * server, `balancer_by_lua` choosing the peer round robin from endpoints held in a Lua table, Lua in the
 * rewrite (scheme, host and port variables, the HTTPS-redirect check, the balancer lookup), header-filter
 * (HSTS over TLS), log (the balancer's after-balance hook and the metrics switch) and, over TLS,
 * certificate phases; per location the variables and upstream headers the template sets, proxy buffering
 * off. Its defaults where they differ from the other peers: access log off (as every peer), metrics off
 * (the controller's default), upstream keep-alive 320 connections, 10,000 requests each.
 * ingress-nginx points each phase at a file; here the same calls are inline blocks and every module is
 * loaded by the master at start, because under root nginx's workers run as `nobody` and the run's scratch
 * folder is private to its owner. Either way nginx compiles the code once per worker.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type IngressNginxOptions, ingressNginxLua, upstreamName } from "./ingress-nginx-lua.ts";
import { nginxPreamble, type RouteSet } from "./routes.ts";
import { nginxTlsDirectives } from "./tls.ts";

const modules = ["ndk_http_module.so", "ngx_http_lua_module.so"].map((m) => `/usr/lib/nginx/modules/${m}`);

/** The Lua module's files (Debian's libnginx-mod-http-lua and what it needs); missing: not installed. */
export const luaModuleFiles = modules;

/** Write the Lua files under `<prefix>/lua` and the locations' include; return nginx.conf's text. */
export async function writeIngressNginx(set: RouteSet, opts: IngressNginxOptions): Promise<string> {
  const lua = join(opts.prefix, "lua");
  for (const [path, text] of Object.entries(ingressNginxLua(set, opts))) {
    const file = join(lua, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  await writeFile(join(opts.prefix, "location.conf"), locationConf());
  return ingressNginxConf(set, opts);
}

/** nginx.conf: the routes as ingress-nginx renders Prefix paths, every location in the same Lua phases. */
export function ingressNginxConf(set: RouteSet, opts: IngressNginxOptions): string {
  const lua = join(opts.prefix, "lua");
  const listen = `listen 127.0.0.1:${opts.port}${opts.tls === undefined ? "" : " ssl"}`;
  // Every server, the default one too (wrk's SNI, an address, names no host), picks its certificate in Lua.
  const certificate =
    opts.tls === undefined ? "" : `    ssl_certificate_by_lua_block { require("certificate").call() }\n`;
  // ingress-nginx renders a Prefix path /p as `location /p/` and `location = /p`, each a full copy of
  // the location's directives; the shared ones are in one include here, which nginx reads the same way.
  const servers = set.hosts
    .map((host, i) => {
      const locations = set.paths
        .flatMap((p) => [`${p}/`, `= ${p}`].map((loc) => locationBlock(loc, p, `bench-${i}`, opts.prefix)))
        .join("\n");
      return `  server {
    server_name ${host};
    ${listen};
    set $proxy_upstream_name "-";
${certificate}${locations}
  }`;
    })
    .join("\n");
  return `${modules.map((m) => `load_module ${m};`).join("\n")}
${nginxPreamble(opts.workers, opts.prefix)}  server_names_hash_bucket_size 128;
  keepalive_timeout 75s;
  keepalive_requests 1000;

  lua_package_path "${lua}/?.lua;;";
  lua_shared_dict luaconfig 1m;
  lua_shared_dict configuration_data 1m;
  lua_shared_dict certificate_data 1m;
  lua_shared_dict certificate_servers 1m;
  init_by_lua_file ${lua}/init.lua;
  init_worker_by_lua_block {
    require("lua_ingress").init_worker()
    require("balancer").init_worker()
  }

  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }
  map $http_x_request_id $req_id {
    default $http_x_request_id;
    "" $request_id;
  }
${opts.tls === undefined ? "" : nginxTlsDirectives(opts.tls)}
  upstream upstream_balancer {
    server 0.0.0.1;
    balancer_by_lua_block { require("balancer").balance() }
    keepalive 320;
    keepalive_time 1h;
    keepalive_timeout 60s;
    keepalive_requests 10000;
  }

  server {
    ${listen} default_server;
${certificate}    return 404;
  }
${servers}
}
`;
}

function locationBlock(location: string, path: string, ingress: string, prefix: string): string {
  return `    location ${location} {
      set $namespace "bench";
      set $ingress_name "${ingress}";
      set $service_name "backend";
      set $service_port "80";
      set $location_path "${path}";
      include ${prefix}/location.conf;
    }`;
}

/** The directives every location shares (nginx.tmpl's location body at ingress-nginx's defaults). */
export function locationConf(): string {
  return `set $force_ssl_redirect "false";
set $ssl_redirect "true";
set $force_no_ssl_redirect "false";
set $preserve_trailing_slash "false";
set $use_port_in_redirects "false";
rewrite_by_lua_block {
  local lua_ingress = require("lua_ingress")
  local balancer = require("balancer")
  lua_ingress.rewrite()
  balancer.rewrite()
}
header_filter_by_lua_block { require("lua_ingress").header() }
log_by_lua_block {
  local balancer = require("balancer")
  balancer.log()
  -- Metrics are off by default in ingress-nginx (--enable-metrics=false); on, a JSON record per request
  -- would be batched here for the controller.
  if ngx.shared.luaconfig:get("enablemetrics") then
    ngx.log(ngx.WARN, "metrics are not part of this bench")
  end
}
port_in_redirect off;
set $balancer_ewma_score -1;
set $proxy_upstream_name "${upstreamName}";
set $proxy_host $proxy_upstream_name;
set $pass_access_scheme $scheme;
set $pass_server_port $server_port;
set $best_http_host $http_host;
set $pass_port $pass_server_port;
set $proxy_alternative_upstream_name "";
client_max_body_size 1m;
proxy_set_header Host $best_http_host;
proxy_set_header Upgrade $http_upgrade;
proxy_set_header Connection $connection_upgrade;
proxy_set_header X-Request-ID $req_id;
proxy_set_header X-Real-IP $remote_addr;
proxy_set_header X-Forwarded-For $remote_addr;
proxy_set_header X-Forwarded-Host $best_http_host;
proxy_set_header X-Forwarded-Port $pass_port;
proxy_set_header X-Forwarded-Proto $pass_access_scheme;
proxy_set_header X-Forwarded-Scheme $pass_access_scheme;
proxy_set_header X-Scheme $pass_access_scheme;
proxy_set_header X-Original-Forwarded-For $http_x_forwarded_for;
proxy_set_header Proxy "";
proxy_connect_timeout 5s;
proxy_send_timeout 60s;
proxy_read_timeout 60s;
proxy_buffering off;
proxy_buffer_size 4k;
proxy_buffers 4 4k;
proxy_request_buffering on;
proxy_http_version 1.1;
proxy_cookie_domain off;
proxy_cookie_path off;
proxy_next_upstream error timeout;
proxy_next_upstream_timeout 0;
proxy_next_upstream_tries 3;
proxy_pass http://upstream_balancer;
proxy_redirect off;
`;
}
