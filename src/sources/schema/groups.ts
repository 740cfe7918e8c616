/**
 * Our API group for policies (GEP-713 direct attachment). A module of its own so that translation can
 * name it without building the policy schemas (index.ts loads those only for policies it reads).
 */
export const policyGroup = "gatehouse.dev";
