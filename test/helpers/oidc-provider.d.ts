/** oidc-provider ships no types; the OIDC integration test uses only its constructor and `callback()`. */
declare module "oidc-provider" {
  const Provider: new (
    issuer: string,
    config: Record<string, unknown>,
  ) => {
    callback(): (req: unknown, res: unknown) => void;
    on(event: string, fn: (...args: unknown[]) => void): void;
  };
  export default Provider;
}
