/**
 * The console's `can(role, action)` (console/src/lib/roles.ts) is a copy of the API's rule (src/access/users/roles.ts
 * with grants() of src/http/scopes.ts): for every role and every action they must agree, or the console would offer
 * what the API refuses (403) or hide what it allows. And the sentences that say who can never show a scope's name.
 */
import { describe, expect, it } from 'vitest';
import { ROLES, scopesOf } from '../../src/access/users/roles.js';
import { grants, INTERNAL_SCOPES, SCOPES } from '../../src/http/scopes.js';
import * as consoleRoles from '../../console/src/lib/roles.js';

describe("the console's roles mirror the API's", () => {
  it('the same roles and actions (every scope and internal scope)', () => {
    expect([...consoleRoles.ROLES].sort()).toEqual([...ROLES].sort());
    expect([...consoleRoles.ACTIONS].sort()).toEqual([...SCOPES, ...INTERNAL_SCOPES].sort());
  });

  it('can(role, action) is what the API grants, for every role and action', () => {
    for (const role of ROLES)
      for (const action of consoleRoles.ACTIONS)
        expect(consoleRoles.can(role, action), `${role} ${action}`).toBe(grants(scopesOf(role), action));
    expect(consoleRoles.can(null, 'read:forms')).toBe(false);
  });

  it('says who can in words, never a scope', () => {
    expect(consoleRoles.whoCanSentence('manage:keys')).toBe('Only admins and owners manage API keys.');
    expect(consoleRoles.whoCanSentence('write:forms')).toBe(
      'Only editors, admins and owners create, change and delete forms.',
    );
    expect(consoleRoles.whoCanSentence('manage:workspace')).toBe("Only owners change the workspace's settings.");
    for (const action of consoleRoles.ACTIONS)
      expect(consoleRoles.whoCanSentence(action)).not.toMatch(/\w+:\w+|admin\b/);
  });
});
