/**
 * The studio database's surface for the rest of the studio: the queries (queries.ts) and the
 * contract views of their rows (views.ts). Each concern lives in its own module; this one only
 * gathers them so callers import one name (`store`).
 */
export * from './queries';
export * from './views';
