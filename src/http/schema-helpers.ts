import { Type, type Static, type TSchema } from 'typebox';

/** A string enum as `{ type: "string", enum: [...] }`: one clear error instead of a union of literals. */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * `T | null` as a JSON Schema type array (`"type": ["string", "null"]`, valid OpenAPI 3.1), so a wrong
 * value gets one error, not one per union branch. Falls back to anyOf for schemas without a plain type.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const raw = schema as unknown as Record<string, unknown>;
  if (typeof raw.type === 'string') {
    const out: Record<string, unknown> = { ...raw, type: [raw.type, 'null'] };
    if (Array.isArray(raw.enum)) out.enum = [...(raw.enum as unknown[]), null];
    return Type.Unsafe<Static<T> | null>(out);
  }
  return Type.Unsafe<Static<T> | null>({ anyOf: [raw, { type: 'null' }] });
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
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
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
