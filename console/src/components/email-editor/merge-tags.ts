/**
 * The merge tags the menu offers: Liquid the send fills in per contact (contract §5's `contact` and `unsubscribe_url`,
 * §19's `webversion_url`: the recipient's own copy in a browser).
 */

export interface MergeTag {
  id: string;
  label: string;
  tag: string;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function mergeTags(propertyKeys: string[]): MergeTag[] {
  return [
    { id: 'first', label: 'First name', tag: '{{ contact.firstName }}' },
    { id: 'first-or', label: 'First name, or “there”', tag: '{{ contact.firstName | default: "there" }}' },
    { id: 'last', label: 'Last name', tag: '{{ contact.lastName }}' },
    { id: 'email', label: 'Email address', tag: '{{ contact.email }}' },
    ...propertyKeys.map((k) => ({
      id: `prop:${k}`,
      label: `Property: ${k}`,
      tag: IDENT.test(k) ? `{{ contact.properties.${k} }}` : `{{ contact.properties["${k.replace(/"/g, '')}"] }}`,
    })),
    { id: 'unsubscribe', label: 'Unsubscribe link (its address)', tag: '{{ unsubscribe_url }}' },
    { id: 'webversion', label: 'Web version link (its address)', tag: '{{ webversion_url }}' },
  ];
}

/** The property keys of some contacts, sorted, at most 20: what the workspace uses, cheaply. */
export function propertyKeysOf(contacts: { properties?: Record<string, unknown> | null }[] | undefined): string[] {
  const keys = new Set<string>();
  for (const c of contacts ?? []) for (const k of Object.keys(c.properties ?? {})) keys.add(k);
  return [...keys].sort((a, b) => a.localeCompare(b)).slice(0, 20);
}
