/**
 * The dashboard page: one HTML document with its style and script inline, served by the gateway itself
 * (no external asset, no build step). It reads `/api/overview` (configuration) and follows
 * `/api/events` (live stats, the configuration version); when the stream is refused (too many open) or
 * drops, it polls `/api/stats`. Values are put in the page with `textContent`, never as HTML, so a
 * hostname or path cannot inject markup. The script avoids template literals: it lives in one here.
 */
export const dashboardPage = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse</title>
<link rel="icon" href="data:,">
<style>
  :root { --fg:#1d2433; --muted:#667085; --line:#e4e7ec; --bg:#f8f9fb; --ok:#12805c; --warn:#b54708; --bad:#c01048; --accent:#3451b2; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.4 system-ui, sans-serif; color:var(--fg); background:var(--bg); }
  header { display:flex; gap:12px; align-items:center; padding:10px 20px; background:#fff; border-bottom:1px solid var(--line); position:sticky; top:0; z-index:1; }
  header h1 { font-size:17px; margin:0 12px 0 0; }
  header input { padding:5px 8px; border:1px solid var(--line); border-radius:6px; width:220px; }
  #live { margin-left:auto; color:var(--muted); font-size:12px; }
  #live.ok::before { content:"\25CF "; color:var(--ok); }
  #live.poll::before { content:"\25CF "; color:var(--warn); }
  main { padding:12px 20px 40px; }
  section { background:#fff; border:1px solid var(--line); border-radius:8px; margin:14px 0; padding:10px 14px; }
  h2 { font-size:15px; margin:2px 0 8px; }
  h2 small { color:var(--muted); font-weight:normal; }
  table { border-collapse:collapse; width:100%; }
  th, td { text-align:left; padding:4px 8px; border-top:1px solid var(--line); vertical-align:top; }
  th { color:var(--muted); font-weight:600; font-size:12px; border-top:none; }
  td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
  .nowrap { white-space:nowrap; }
  .mono { font-family:ui-monospace, monospace; font-size:12px; }
  .muted { color:var(--muted); }
  .tag { display:inline-block; padding:0 6px; border-radius:9px; font-size:11px; background:#eef2ff; color:var(--accent); margin:1px 2px; }
  .bad { color:var(--bad); } .warn { color:var(--warn); } .ok { color:var(--ok); }
  a { color:var(--accent); cursor:pointer; text-decoration:none; }
  a:hover { text-decoration:underline; }
  svg.spark { width:120px; height:24px; display:block; }
  #total { width:100%; height:90px; display:block; }
  #problem-filter { font-size:12px; }
</style>
</head>
<body>
<header>
  <h1>Gatehouse</h1>
  <input id="q-host" placeholder="host, e.g. shop.example.com" autocomplete="off">
  <input id="q-path" placeholder="path, e.g. /api/orders" autocomplete="off">
  <span id="live">connecting</span>
</header>
<main>
  <section><h2>Traffic <small id="window"></small></h2><svg id="total" viewBox="0 0 600 90" preserveAspectRatio="none"></svg></section>
  <section><h2>Routes <small id="route-count"></small></h2>
    <table><thead><tr><th>host</th><th>listener</th><th>match</th><th>route</th><th>from</th><th>action</th><th>policies</th>
    <th>req/s</th><th>5xx</th><th>p50</th><th>p99</th><th>last minutes</th></tr></thead><tbody id="routes"></tbody></table></section>
  <section><h2>Listeners</h2>
    <table><thead><tr><th>listener</th><th>address</th><th>protocol</th><th>hostname</th><th>certificates (expiry)</th></tr></thead><tbody id="listeners"></tbody></table></section>
  <section><h2>Backends</h2>
    <table><thead><tr><th>backend</th><th>protocol</th><th>endpoints</th><th>state</th></tr></thead><tbody id="backends"></tbody></table></section>
  <section><h2>Policies</h2>
    <table><thead><tr><th>policy</th><th>does</th><th>applies to</th><th>conditions</th></tr></thead><tbody id="policies"></tbody></table></section>
  <section id="problems-section"><h2>Problems <small id="problem-filter"></small></h2>
    <table><thead><tr><th>severity</th><th>object</th><th>reason</th><th>message</th></tr></thead><tbody id="problems"></tbody></table></section>
</main>
<script>
"use strict";
var overview = null, stats = null, version = -1, problemFilter = null, pollTimer = null;
function $(id) { return document.getElementById(id); }
function el(tag, props) {
  var e = document.createElement(tag);
  if (props) for (var k in props) { if (k === "text") e.textContent = props[k]; else if (k === "cls") e.className = props[k]; else e.setAttribute(k, props[k]); }
  for (var i = 2; i < arguments.length; i++) { var c = arguments[i]; if (c == null) continue; e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); }
  return e;
}
function refName(r) { return r.kind + " " + (r.namespace ? r.namespace + "/" : "") + r.name; }
function sameRef(a, b) { return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name; }
function fill(id, rows) { var t = $(id); t.replaceChildren.apply(t, rows); }
function ms(v) { return v == null ? "–" : v < 10 ? v.toFixed(1) + " ms" : Math.round(v) + " ms"; }

// Search: a route shows when its virtual host would take the host asked, and its path match the path
// (or when the text is part of them, for partial input).
function hostMatches(route, q) {
  if (!q) return true;
  q = q.toLowerCase();
  var h = route.host;
  if (h.indexOf(q) >= 0 || route.hostMatch === "Any") return true;
  if (h.slice(0, 2) === "*.") { var suffix = h.slice(1); return q.length > suffix.length && q.slice(-suffix.length) === suffix && (route.hostMatch !== "WildcardOneLabel" || q.slice(0, -suffix.length).indexOf(".") < 0); }
  return false;
}
function pathMatches(route, q) {
  if (!q) return true;
  var sp = route.path.indexOf(" "), type = route.path.slice(0, sp), value = route.path.slice(sp + 1).replace(/ \(any case\)$/, "");
  if (value.indexOf(q) >= 0) return true;
  if (type === "Exact") return q === value;
  if (type === "Prefix") return value === "/" || q === value || q.slice(0, value.length + 1) === value + "/";
  try { return new RegExp("^(?:" + value + ")$", / \(any case\)$/.test(route.path) ? "i" : "").test(q); } catch (e) { return false; }
}
function problemsOf(ref) { return overview.problems.filter(function (p) { return sameRef(p.object, ref); }); }
function showProblems(ref) {
  problemFilter = ref; renderProblems();
  $("problems-section").scrollIntoView();
}
function spark(counts, errors) {
  var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "spark"); svg.setAttribute("viewBox", "0 0 120 24"); svg.setAttribute("preserveAspectRatio", "none");
  drawSeries(svg, counts, errors, 120, 24);
  return svg;
}
function drawSeries(svg, counts, errors, w, h) {
  var max = Math.max.apply(null, counts.concat([1])), n = counts.length;
  function line(values, color) {
    var pts = values.map(function (v, i) { return (i * w / Math.max(1, n - 1)).toFixed(1) + "," + (h - 1 - v * (h - 2) / max).toFixed(1); });
    var p = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
    p.setAttribute("points", pts.join(" ")); p.setAttribute("fill", "none"); p.setAttribute("stroke", color); p.setAttribute("stroke-width", "1.5");
    p.setAttribute("vector-effect", "non-scaling-stroke");
    svg.appendChild(p);
  }
  line(counts, "#3451b2");
  if (errors.some(function (v) { return v > 0; })) line(errors, "#c01048");
}

function renderRoutes() {
  if (!overview) return;
  var qh = $("q-host").value.trim(), qp = $("q-path").value.trim();
  var live = {};
  if (stats) stats.routes.forEach(function (r) { live[r.route] = r; });
  var shown = overview.routes.filter(function (r) { return hostMatches(r, qh) && pathMatches(r, qp); });
  $("route-count").textContent = shown.length + " of " + overview.routes.length;
  fill("routes", shown.map(function (r) {
    var s = live[r.name], n = problemsOf(r.source).length;
    var from = el("td", null, el("span", { cls: "tag", text: r.source.kind }), " " + r.source.namespace + "/" + r.source.name);
    if (n > 0) { var a = el("a", { cls: "bad", text: " " + n + " problem" + (n > 1 ? "s" : "") }); a.onclick = function () { showProblems(r.source); }; from.appendChild(a); }
    var action = r.action === "forward" ? r.backends.map(function (b) { return b.id + (r.backends.length > 1 ? " ×" + b.weight : "") + (b.failStatus ? " (" + b.failStatus + ")" : ""); }).join(", ") : r.action;
    return el("tr", { "data-route": r.name },
      el("td", { cls: "mono", text: r.host }),
      el("td", { cls: "mono muted", text: r.listener }),
      el("td", { cls: "mono nowrap", text: (r.method ? r.method + " " : "") + r.path + (r.conditions.length ? " + " + r.conditions.join(", ") : "") }),
      el("td", { cls: "mono muted", text: r.name }),
      from,
      el("td", { cls: "mono", text: action + (r.filters.length ? " [" + r.filters.join(", ") + "]" : "") }),
      el("td", null, r.policies.map(function (p) { return el("span", { cls: "tag", text: p }); }).reduce(function (td, t) { td.appendChild(t); return td; }, el("span"))),
      el("td", { cls: "num", text: s ? s.rate.toFixed(2) : "0" }),
      el("td", { cls: "num" + (s && s.errorRatio > 0.05 ? " bad" : ""), text: s ? (s.errorRatio * 100).toFixed(1) + "%" : "–" }),
      el("td", { cls: "num", text: ms(s && s.p50Ms) }),
      el("td", { cls: "num", text: ms(s && s.p99Ms) }),
      el("td", null, s ? spark(s.counts, s.errors) : null));
  }));
  // Requests no route took (404s, 400s) are counted under "(none)".
  var none = live["(none)"];
  if (none && !qh && !qp) $("routes").appendChild(el("tr", { "data-route": "(none)" }, el("td", { cls: "muted", text: "no route matched" }),
    el("td"), el("td"), el("td"), el("td"), el("td"), el("td"), el("td", { cls: "num", text: none.rate.toFixed(2) }),
    el("td", { cls: "num", text: (none.errorRatio * 100).toFixed(1) + "%" }), el("td", { cls: "num", text: ms(none.p50Ms) }),
    el("td", { cls: "num", text: ms(none.p99Ms) }), el("td", null, spark(none.counts, none.errors))));
}
function renderProblems() {
  var list = overview.problems.filter(function (p) { return !problemFilter || sameRef(p.object, problemFilter); });
  var f = $("problem-filter");
  f.replaceChildren();
  if (problemFilter) { var all = el("a", { text: "show all" }); all.onclick = function () { problemFilter = null; renderProblems(); }; f.append("for " + refName(problemFilter) + " · ", all); }
  else f.textContent = list.length + " in the current configuration";
  fill("problems", list.map(function (p) {
    return el("tr", { "data-object": refName(p.object) }, el("td", { cls: p.severity === "error" ? "bad" : p.severity === "warning" ? "warn" : "muted", text: p.severity }),
      el("td", { cls: "mono", text: refName(p.object) }), el("td", { text: p.reason }), el("td", { text: p.message }));
  }));
}
function renderConfig() {
  var now = Date.now() / 1000;
  fill("listeners", overview.listeners.map(function (l) {
    var certs = el("td");
    l.certificates.forEach(function (c) {
      var days = c.notAfter == null ? null : Math.floor((c.notAfter - now) / 86400);
      certs.appendChild(el("div", { cls: days == null ? "bad" : days < 14 ? "bad" : days < 30 ? "warn" : "" },
        refName(c.source) + (c.isDefault ? " (default)" : "") + " · " + (c.hostnames.join(", ") || "any name") + " · " +
        (days == null ? "unreadable" : new Date(c.notAfter * 1000).toISOString().slice(0, 10) + " (" + days + " days)")));
    });
    return el("tr", null, el("td", { cls: "mono", text: l.name }), el("td", { cls: "mono", text: (l.address || "*") + ":" + l.port }),
      el("td", { text: l.protocol }), el("td", { cls: "mono", text: l.hostname || "any" }), certs);
  }));
  fill("backends", overview.backends.map(function (b) {
    return el("tr", null, el("td", { cls: "mono", text: b.id }), el("td", { text: b.protocol }),
      el("td", { cls: "mono", text: b.endpoints.map(function (e) { return e.address + ":" + e.port + (e.pod ? " (" + e.pod + ")" : ""); }).join(", ") || "none" }),
      el("td", { cls: b.problem ? "bad" : "ok", text: b.problem || "ready (" + b.endpoints.length + ")" }));
  }));
  fill("policies", overview.policies.map(function (p) {
    var name = el("td", { cls: "mono" }, p.kind + " " + p.namespace + "/" + p.name);
    var n = problemsOf(p).length;
    if (n > 0) { var a = el("a", { cls: "bad", text: " " + n + " problem" + (n > 1 ? "s" : "") }); a.onclick = function () { showProblems(p); }; name.appendChild(a); }
    return el("tr", null, name, el("td", { text: p.summary }), el("td", { cls: "mono", text: p.routes.join(", ") || "nothing" }),
      el("td", { cls: "mono", text: p.conditions.join(", ") }));
  }));
  renderProblems();
}
function renderTotal() {
  if (!stats) return;
  var n = stats.slices + 1, counts = new Array(n).fill(0), errors = new Array(n).fill(0);
  stats.routes.forEach(function (r) { r.counts.forEach(function (v, i) { counts[i] += v; errors[i] += r.errors[i]; }); });
  var svg = $("total"); svg.replaceChildren(); drawSeries(svg, counts, errors, 600, 90);
  var total = stats.routes.reduce(function (a, r) { return a + r.rate; }, 0);
  $("window").textContent = "last " + Math.round(stats.slices * stats.sliceSeconds / 60) + " minutes in steps of " + stats.sliceSeconds + " s; " +
    total.toFixed(2) + " req/s now; rates, 5xx and percentiles over the last " + stats.recentSeconds + " s";
}
function loadOverview() {
  return fetch("api/overview").then(function (r) { return r.json(); }).then(function (o) { overview = o; renderConfig(); renderRoutes(); });
}
function onStats(s) {
  stats = s;
  if (s.version !== version) { version = s.version; loadOverview(); } else renderRoutes();
  renderTotal();
}
function poll() {
  $("live").className = "poll"; $("live").textContent = "polling";
  fetch("api/stats").then(function (r) { return r.json(); }).then(onStats).catch(function () { $("live").textContent = "gateway unreachable"; });
}
function follow() {
  var es = new EventSource("api/events");
  es.addEventListener("stats", function (e) {
    if (pollTimer) { clearInterval(pollTimer); pollTimer = null; }
    $("live").className = "ok"; $("live").textContent = "live";
    onStats(JSON.parse(e.data));
  });
  es.onerror = function () { if (!pollTimer) { poll(); pollTimer = setInterval(poll, 2000); } };
}
$("q-host").oninput = renderRoutes;
$("q-path").oninput = renderRoutes;
var params = new URLSearchParams(location.search);
$("q-host").value = params.get("host") || "";
$("q-path").value = params.get("path") || "";
loadOverview().then(follow);
</script>
</body>
</html>
`;
