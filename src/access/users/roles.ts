import type { InternalScope, Scope } from '../../http/scopes.js';

export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

const VIEWER: (Scope | InternalScope)[] = [
  'read:forms',
  'read:broadcasts',
  'read:contacts',
  'read:domains',
  'read:webhooks',
];
const EDITOR: (Scope | InternalScope)[] = [
  ...VIEWER,
  'write:forms',
  'write:contacts',
  'write:broadcasts',
  'send:emails',
];
const ADMIN: (Scope | InternalScope)[] = [
  ...EDITOR,
  'write:domains',
  'write:webhooks',
  'manage:keys',
  'manage:people',
  'read:audit',
];

/**
 * A role is a set of scopes, so sessions and API keys go through one authorisation path (authorize in http/auth.ts):
 * viewer reads, editor writes forms, contacts and broadcasts and sends (and reads) transactional emails, admin also domains, webhooks, keys and people,
 * owner holds `admin` (everything, the workspace's settings and other owners included).
 */
export const ROLE_SCOPES: Record<Role, readonly string[]> = {
  viewer: VIEWER,
  editor: EDITOR,
  admin: ADMIN,
  owner: ['admin'],
};

export function scopesOf(role: Role): string[] {
  return [...ROLE_SCOPES[role]];
}
