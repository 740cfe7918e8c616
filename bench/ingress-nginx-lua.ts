/**
 * The Lua of the ingress-nginx-shaped nginx (ingress-nginx.ts), module by module, after ingress-nginx's
 * `balancer.lua`, `balancer/round_robin.lua`, `lua_ingress.lua` and `certificate.lua`: the same work per
 * request and per handshake, written here, not copied.
 */
import type { RouteSet } from "./routes.ts";
import type { BenchCertificate } from "./tls.ts";

/** The upstream name every route's location sets (`$proxy_upstream_name`): namespace-service-port. */
export const upstreamName = "bench-backend-80";

export interface IngressNginxOptions {
  readonly port: number;
  readonly upstreamPort: number;
  readonly workers: number;
  /** nginx's prefix; the Lua files are written under `<prefix>/lua`. */
  readonly prefix: string;
  readonly tls?: Pick<BenchCertificate, "certFile" | "keyFile">;
}

/**
 * The Lua, by path under `<prefix>/lua`. The controller hands ingress-nginx its backends and certificates at run time; here they are a Lua
 * table in `bench_config.lua`, put in the same shared dictionaries at start.
 */
export function ingressNginxLua(set: RouteSet, opts: IngressNginxOptions): Record<string, string> {
  const tlsHosts = opts.tls === undefined ? [] : [...set.hosts, "_"];
  return {
    "bench_config.lua": `return {
  listen_ports = { http = "${opts.tls === undefined ? opts.port : 0}", https = "${opts.tls === undefined ? 0 : opts.port}", status_port = "10246" },
  use_forwarded_headers = false,
  use_proxy_protocol = false,
  http_redirect_code = 308,
  hsts = true,
  hsts_max_age = "31536000",
  hsts_include_subdomains = true,
  hsts_preload = false,
  enable_metrics = false,
  backends = {
    { name = "${upstreamName}", endpoints = { { address = "127.0.0.1", port = "${opts.upstreamPort}" } } },
  },
  certificate_servers = { ${tlsHosts.map((h) => `["${h}"] = "bench-tls"`).join(", ")} },
  certificate_files = { ${opts.tls === undefined ? "" : `["bench-tls"] = { "${opts.tls.certFile}", "${opts.tls.keyFile}" }`} },
}
`,
    "init.lua": `-- Once in the master: what the controller would post, into the shared dictionaries; modules loaded here
-- are the workers' too.
local config = require("bench_config")
local shared = ngx.shared
shared.luaconfig:set("enablemetrics", config.enable_metrics)
shared.configuration_data:set("raw_backends_last_synced_at", os.time())
for host, uid in pairs(config.certificate_servers) do
  shared.certificate_servers:set(host, uid)
end
for uid, files in pairs(config.certificate_files) do
  local pem = {}
  for i, file in ipairs(files) do
    local f = assert(io.open(file, "r"))
    pem[i] = f:read("*a")
    f:close()
  end
  shared.certificate_data:set(uid, table.concat(pem, "\\n"))
end
require("lua_ingress").set_config(config)
require("balancer")
require("certificate")
`,
    "lua_ingress.lua": LUA_INGRESS,
    "certificate.lua": CERTIFICATE,
    "balancer.lua": BALANCER,
    "balancer/round_robin.lua": ROUND_ROBIN,
  };
}

const LUA_INGRESS = `local ngx = ngx
local split = require("ngx.re").split
local cert_configured = require("certificate").configured_for_current_request

local _M = {}
local config

local function bool(v)
  return v == "true"
end

local function wants_https(loc)
  if loc.force_no_ssl_redirect then return false end
  local scheme = ngx.var.pass_access_scheme
  if loc.force_ssl_redirect and scheme == "http" then return true end
  if scheme ~= "http" then return false end
  return loc.ssl_redirect and cert_configured()
end

function _M.set_config(c)
  config = c
end

function _M.init_worker()
  math.randomseed(ngx.now() * 1000 + ngx.worker.pid())
end

function _M.rewrite()
  local var = ngx.var
  local loc = {
    force_ssl_redirect = bool(var.force_ssl_redirect),
    ssl_redirect = bool(var.ssl_redirect),
    force_no_ssl_redirect = bool(var.force_no_ssl_redirect),
    preserve_trailing_slash = bool(var.preserve_trailing_slash),
    use_port_in_redirects = bool(var.use_port_in_redirects),
  }
  var.pass_access_scheme = var.scheme
  var.best_http_host = var.http_host or var.host
  if config.use_forwarded_headers then
    if var.http_x_forwarded_proto then var.pass_access_scheme = var.http_x_forwarded_proto end
    if var.http_x_forwarded_port then var.pass_server_port = var.http_x_forwarded_port end
  end
  var.pass_port = var.pass_server_port
  if var.pass_server_port == config.listen_ports.https then
    var.pass_port = 443
  end
  if wants_https(loc) then
    local parts = split(var.best_http_host, ":")
    local uri = var.request_uri
    if not loc.preserve_trailing_slash and uri:byte(-1) == 47 then uri = uri:sub(1, -2) end
    return ngx.redirect("https://" .. parts[1] .. uri, config.http_redirect_code)
  end
end

function _M.header()
  if config.hsts and ngx.var.scheme == "https" then
    local value = "max-age=" .. config.hsts_max_age
    if config.hsts_include_subdomains then value = value .. "; includeSubDomains" end
    if config.hsts_preload then value = value .. "; preload" end
    ngx.header["Strict-Transport-Security"] = value
  end
end

return _M
`;

const CERTIFICATE = `local ngx = ngx
local ssl = require("ngx.ssl")
local re_sub = ngx.re.sub

local _M = {}
local servers = ngx.shared.certificate_servers
local data = ngx.shared.certificate_data

-- The certificate for a name: the name itself, else its wildcard.
local function uid_for(name)
  local host = re_sub(name, "\\\\.$", "", "jo"):lower()
  local uid = servers:get(host)
  if uid then return uid end
  local wildcard = re_sub(host, "^[^\\\\.]+\\\\.", "*.", "jo")
  if wildcard then return servers:get(wildcard) end
  return nil
end

function _M.configured_for_current_request()
  local ctx = ngx.ctx
  if ctx.cert_configured == nil then
    ctx.cert_configured = uid_for(ngx.var.host) ~= nil
  end
  return ctx.cert_configured
end

-- Per handshake: the name's certificate (else the default one, "_"), converted and set.
function _M.call()
  local name = ssl.server_name() or "_"
  local uid = uid_for(name) or servers:get("_")
  local pem = uid and data:get(uid)
  if not pem then return end
  assert(ssl.clear_certs())
  local cert = assert(ssl.cert_pem_to_der(pem))
  local key = assert(ssl.priv_key_pem_to_der(pem))
  assert(ssl.set_der_cert(cert))
  assert(ssl.set_der_priv_key(key))
end

return _M
`;

const BALANCER = `local ngx = ngx
local ngx_balancer = require("ngx.balancer")
local round_robin = require("balancer.round_robin")
local config = require("bench_config")

local _M = {}
local balancers = {}
local synced_at = 0
local SELF = "^127.*:" .. config.listen_ports.status_port .. "$"

-- Every second, as ingress-nginx: rebuild the balancers when the backends changed.
local function sync_backends()
  local at = ngx.shared.configuration_data:get("raw_backends_last_synced_at") or 0
  if at <= synced_at then return end
  local keep = {}
  for _, backend in ipairs(config.backends) do
    balancers[backend.name] = round_robin.new(backend)
    keep[backend.name] = true
  end
  for name in pairs(balancers) do
    if not keep[name] then balancers[name] = nil end
  end
  synced_at = at
end

-- A canary backend would be chosen here; these routes have none.
local function to_alternative(b)
  if b:is_affinitized() then return false end
  if not b.alternative_backends then return false end
  return false
end

local function get_balancer()
  local ctx = ngx.ctx
  if ctx.balancer then return ctx.balancer end
  local b = balancers[ngx.var.proxy_upstream_name]
  if not b then return nil end
  if to_alternative(b) then
    b = balancers[b.alternative_backends[1]]
  end
  ctx.balancer = b
  return b
end

function _M.init_worker()
  sync_backends()
  local ok, err = ngx.timer.every(1, sync_backends)
  if not ok then ngx.log(ngx.ERR, "backend sync timer: ", err) end
end

function _M.rewrite()
  if not get_balancer() then
    return ngx.exit(ngx.HTTP_SERVICE_UNAVAILABLE)
  end
end

function _M.balance()
  local b = get_balancer()
  if not b then return end
  local peer = b:balance()
  if not peer then return end
  if peer:match(SELF) then
    ngx.log(ngx.ERR, "refusing to proxy to self: ", peer)
    return
  end
  ngx_balancer.set_more_tries(1)
  local ok, err = ngx_balancer.set_current_peer(peer)
  if not ok then ngx.log(ngx.ERR, "set_current_peer ", peer, ": ", err) end
end

function _M.log()
  local b = get_balancer()
  if not b or not b.after_balance then return end
  b:after_balance()
end

return _M
`;

const ROUND_ROBIN = `local _M = { name = "round_robin" }
_M.__index = _M

function _M.new(backend)
  local peers = {}
  for i, e in ipairs(backend.endpoints) do
    peers[i] = e.address .. ":" .. e.port
  end
  return setmetatable({ peers = peers, last = 0, alternative_backends = backend.alternativeBackends }, _M)
end

function _M:is_affinitized()
  return false
end

function _M:balance()
  self.last = self.last % #self.peers + 1
  return self.peers[self.last]
end

return _M
`;
