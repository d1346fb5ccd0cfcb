import { Type, type Static, type TSchema } from 'typebox';

/** A string enum as `{ type: "string", enum: [...] }`: one clear error instead of a union of literals. */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * `T | null` as a JSON Schema type array (`"type": ["string", "null"]`, valid OpenAPI 3.1), so a wrong
 * value gets one error, not one per union branch. Falls back to anyOf for schemas without a plain type.
 */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}) {
  const raw = schema as unknown as Record<string, unknown>;
  if (typeof raw.type === 'string') {
    const out: Record<string, unknown> = { ...raw, type: [raw.type, 'null'], ...options };
    if (Array.isArray(raw.enum)) out.enum = [...(raw.enum as unknown[]), null];
    return Type.Unsafe<Static<T> | null>(out);
  }
  return Type.Unsafe<Static<T> | null>({ anyOf: [raw, { type: 'null' }], ...options });
}

/** An object whose keys must match `keyPattern`; any other key is rejected (TypeBox's Record allows them). */
export function StrictRecord<V extends TSchema>(keyPattern: string, value: V, options: Record<string, unknown> = {}) {
  return Type.Unsafe<Record<string, Static<V>>>({
    type: 'object',
    patternProperties: { [keyPattern]: value },
    additionalProperties: false,
    ...options,
  });
}

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC, milliseconds' });

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          path: Type.String(),
          message: Type.String(),
          keyword: Type.Optional(
            Type.String({ description: 'what was violated: a JSON Schema keyword or a rule of the service' }),
          ),
          params: Type.Optional(
            Type.Record(Type.String(), Type.Unknown(), {
              description: "the keyword's figures: limit, format, pattern, allowedValues, type",
            }),
          ),
        }),
      ),
    ),
    requestId: Type.String(),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details' },
);

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), nextCursor: Nullable(Type.String()) });
}

/** An id in the path: opaque, but never longer than any id the service issues. */
export const PathId = Type.String({ minLength: 1, maxLength: 64 });

/** The keyword that marks a schema as checked by its service (checkedByService). */
const CHECKED_BY_SERVICE = 'x-checked-by-service';

/**
 * Marks a schema whose values its feature checks itself, by hand: a recursive grammar with limits a JSON Schema cannot
 * state (depth, size, value types by field), reported as one error per violation at its exact JSON Pointer. The
 * OpenAPI document, and so the SDK's and the console's types, get the schema; the request validator and the response
 * serializer get `{}` in its place (forRuntime), so the service's check stays the one that answers.
 */
export function checkedByService<T extends TSchema>(schema: T): T {
  return Object.assign(schema, { [CHECKED_BY_SERVICE]: true });
}

/** `schema` as Ajv and the serializer get it: every part marked by checkedByService is `{}` (any value). */
export function forRuntime(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forRuntime);
  if (typeof schema !== 'object' || schema === null) return schema;
  if ((schema as Record<string, unknown>)[CHECKED_BY_SERVICE] === true) return {};
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = forRuntime(value);
    if (out[key] !== value) changed = true;
  }
  // Unchanged schemas are handed on as they are (their identity, and TypeBox's hidden keys, kept).
  return changed ? out : schema;
}
