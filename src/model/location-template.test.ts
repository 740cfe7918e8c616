import { describe, expect, test } from "bun:test";
import { fillLocation, parseLocationTemplate } from "./location-template.ts";

describe("parseLocationTemplate", () => {
  test("splits text and variables, both spellings", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${name} variable syntax
    expect(parseLocationTemplate("https://x.example${request_uri}/a$is_args$args")).toEqual({
      ok: true,
      parts: [
        { text: "https://x.example" },
        { variable: "request_uri" },
        { text: "/a" },
        { variable: "is_args" },
        { variable: "args" },
      ],
    });
    expect(parseLocationTemplate("https://x.example/")).toEqual({
      ok: true,
      parts: [{ text: "https://x.example/" }],
    });
  });
  test("a name runs as far as nginx reads it", () => {
    const r = parseLocationTemplate("https://x.example/$uri_x");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain("$uri_x is not one of the variables");
  });
  test("malformed and unknown variables are refused", () => {
    for (const t of ["https://x.example/$", "https://x.example/${uri", "https://$remote_addr/", "a$-b"])
      expect(parseLocationTemplate(t).ok).toBe(false);
  });
  test("fillLocation substitutes, never re-reads", () => {
    const r = parseLocationTemplate("https://x.example$uri");
    if (!r.ok) throw new Error(r.message);
    expect(fillLocation(r.parts, () => "/$host")).toBe("https://x.example/$host");
  });
});
