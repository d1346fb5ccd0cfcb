/**
 * What each role may do: the console's copy of src/access/users/roles.ts (test/unit/console-roles.test.ts checks
 * that the two agree, action by action). Contract §14: viewer reads; editor also writes forms, contacts and
 * broadcasts; admin also domains, webhooks, keys and people; owner also the workspace.
 *
 * In a page, use `useCan()` (api/session.tsx) for the signed-in person, and `<NotAllowed>` / `notAllowedText()`
 * (components/NotAllowed.tsx) to say in plain words who can, never a scope's name:
 *
 *     const can = useCan();
 *     {can('write:forms') ? <Button …>New form</Button> : <NotAllowed action="write:forms" />}
 *
 * An action is named like the API's scope that guards it; templates, images and automations go with broadcasts
 * (`write:broadcasts`), segments and topics with contacts (`write:contacts`), the workspace's settings are
 * `manage:workspace`.
 */

export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const ACTIONS = [
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
  'manage:keys',
  'manage:people',
  'read:audit',
  'manage:workspace',
  'admin',
] as const;
export type Action = (typeof ACTIONS)[number];

const VIEWER: Action[] = ['read:forms', 'read:broadcasts', 'read:contacts', 'read:domains', 'read:webhooks'];
const EDITOR: Action[] = [...VIEWER, 'write:forms', 'write:contacts', 'write:broadcasts', 'send:emails'];
const ADMIN: Action[] = [...EDITOR, 'write:domains', 'write:webhooks', 'manage:keys', 'manage:people', 'read:audit'];

const ROLE_ACTIONS: Record<Role, readonly Action[]> = {
  viewer: VIEWER,
  editor: EDITOR,
  admin: ADMIN,
  owner: ACTIONS,
};

/** Whether a person with `role` may do `action` (the API answers 403 otherwise). No role (an API key): false. */
export function can(role: Role | null | undefined, action: Action): boolean {
  return !!role && ROLE_ACTIONS[role].includes(action);
}

/** The roles that may do `action`, most powerful first (owner always among them). */
export function rolesThatCan(action: Action): Role[] {
  return ROLES.filter((r) => can(r, action));
}

const PLURAL: Record<Role, string> = { owner: 'owners', admin: 'admins', editor: 'editors', viewer: 'viewers' };

/** "Only admins and owners", "Only editors, admins and owners", "Only owners". */
export function onlyWho(action: Action): string {
  const names = rolesThatCan(action)
    .reverse()
    .filter((r) => r !== 'viewer')
    .map((r) => PLURAL[r]);
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : names[0];
  return `Only ${list}`;
}

/** What an action lets people do, in words that finish "Only admins and owners …". */
export const ACTION_WORDS: Record<Action, string> = {
  'read:forms': 'see forms',
  'write:forms': 'create, change and delete forms',
  'read:broadcasts': 'see broadcasts',
  'write:broadcasts': 'create, change and send broadcasts, templates and automations',
  'read:contacts': 'see contacts',
  'write:contacts': 'change contacts, segments and topics',
  'read:domains': 'see sending domains',
  'write:domains': 'add, verify and remove sending domains',
  'read:webhooks': 'see webhooks',
  'write:webhooks': 'add, change and remove webhooks',
  'send:emails': 'send transactional emails and see them',
  'manage:keys': 'manage API keys',
  'manage:people': 'invite people and change their roles',
  'read:audit': 'read the audit log',
  'manage:workspace': "change the workspace's settings",
  admin: 'give or take the owner role',
};

/** "Only admins and owners manage API keys." (with `words`, e.g. "revoke keys", instead of the action's own). */
export function whoCanSentence(action: Action, words = ACTION_WORDS[action]): string {
  return `${onlyWho(action)} ${words}.`;
}
