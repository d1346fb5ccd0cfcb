// The Integrations context's face (docs/architecture.md): empty on purpose. Integrations sit at the top of the map;
// only the composition root (src/app.ts, src/jobs) builds and wires them.
export {};
