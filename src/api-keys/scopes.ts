export const SCOPES = [
  'read:forms', 'write:forms', 'read:broadcasts', 'write:broadcasts', 'read:contacts', 'write:contacts',
  'read:domains', 'write:domains', 'read:webhooks', 'write:webhooks', 'admin',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** `admin` grants everything; `write:X` grants `read:X` (docs/api.md §2). */
export function grants(held: readonly string[], needed: Scope): boolean {
  if (held.includes('admin') || held.includes(needed)) return true;
  return needed.startsWith('read:') && held.includes(`write:${needed.slice(5)}`);
}
