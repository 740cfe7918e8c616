/**
 * Our API group for policies (GEP-713 direct attachment), and the one annotation of ours the sources set. A
 * module of its own so that translation can name them without building the schemas (index.ts loads those
 * only for the kinds it reads).
 */
export const policyGroup = "gatehouse.dev";

/**
 * On the stand-in a source serves for a refused object whose absence would open a guard (index.ts
 * `refusedStandIn`): why the schema refused it, for the object's status.
 */
export const refusedBySchemaAnnotation = `${policyGroup}/refused-by-schema`;
