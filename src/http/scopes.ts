export const SCOPES = [
  'read:forms',
  'write:forms',
  'read:broadcasts',
  'write:broadcasts',
  'read:contacts',
  'write:contacts',
  'read:domains',
  'write:domains',
  'read:webhooks',
  'write:webhooks',
  'send:emails',
  'admin',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Scopes only console sessions hold, through their role (src/access/users/roles.ts): never grantable to an API key
 * (isScope refuses them), which reach the same operations with `admin`.
 */
export const INTERNAL_SCOPES = ['manage:keys', 'manage:people', 'manage:workspace', 'read:audit'] as const;

export type InternalScope = (typeof INTERNAL_SCOPES)[number];

export function isInternalScope(value: string): value is InternalScope {
  return (INTERNAL_SCOPES as readonly string[]).includes(value);
}

/** `admin` grants everything; `write:X` grants `read:X` (docs/api.md §2). */
export function grants(held: readonly string[], needed: Scope | InternalScope): boolean {
  if (held.includes('admin') || held.includes(needed)) return true;
  return needed.startsWith('read:') && held.includes(`write:${needed.slice(5)}`);
}
