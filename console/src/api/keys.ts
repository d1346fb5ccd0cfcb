/**
 * The query keys of the console's cache, one factory per resource. A key starts with its resource, so invalidating a
 * prefix reaches exactly the queries under it: `contactKeys.all` every contact query, `contactKeys.lists()` the
 * lists only (a detail just written with setQueryData is not fetched again). Every useQuery, useCursorList,
 * setQueryData and invalidateQueries of the console takes its key from here.
 */

export const contactKeys = {
  all: ['contacts'] as const,
  lists: () => [...contactKeys.all, 'list'] as const,
  list: (params: { q: string; status: string; topicId: string; tag: string; cursor: string | undefined }) =>
    [...contactKeys.lists(), params] as const,
  /** How many contacts the list has with these filters (all of them: no filter). */
  count: (params: { q: string; status: string; topicId: string; tag: string }) =>
    [...contactKeys.all, 'count', params] as const,
  /** The workspace's tags with their counts (GET /v1/tags). */
  tags: () => [...contactKeys.all, 'tags'] as const,
  /** A bulk action's progress. */
  bulk: (jobId: string) => [...contactKeys.all, 'bulk', jobId] as const,
  /** The newest contacts, for the simulator's picker. */
  recent: () => [...contactKeys.all, 'recent'] as const,
  /** New contacts per hour (the dashboard). */
  signups: () => [...contactKeys.all, 'signups'] as const,
  detail: (id: string) => [...contactKeys.all, 'detail', id] as const,
  activity: (id: string) => [...contactKeys.all, 'activity', id] as const,
};

export const segmentKeys = {
  all: ['segments'] as const,
  list: () => [...segmentKeys.all, 'list'] as const,
  picker: () => [...segmentKeys.all, 'picker'] as const,
  preview: (filter: unknown) => [...segmentKeys.all, 'preview', filter] as const,
  detail: (id: string) => [...segmentKeys.all, 'detail', id] as const,
  /** How many contacts one segment matches now (the list's Matches column), per saved version. */
  count: (id: string, updatedAt: string) => [...segmentKeys.all, 'count', id, updatedAt] as const,
};

export const topicKeys = {
  all: ['topics'] as const,
  list: () => [...topicKeys.all, 'list'] as const,
  picker: () => [...topicKeys.all, 'picker'] as const,
};

export const broadcastKeys = {
  all: ['broadcasts'] as const,
  lists: () => [...broadcastKeys.all, 'list'] as const,
  list: (status: string) => [...broadcastKeys.lists(), status] as const,
  /** The sent ones, for pickers (an engagement condition's broadcast). */
  sentPicker: () => [...broadcastKeys.all, 'sent-picker'] as const,
  /** The newest five (the dashboard). */
  recent: () => [...broadcastKeys.all, 'recent'] as const,
  detail: (id: string) => [...broadcastKeys.all, 'detail', id] as const,
  /** What one broadcast's page asks besides the broadcast itself; the saved version's `updatedAt` keys what depends on it. */
  previewContacts: (id: string, segmentId: string | null, topicId: string | null) =>
    [...broadcastKeys.all, id, 'preview-contacts', segmentId, topicId] as const,
  preview: (id: string, updatedAt: string, contactId: string) =>
    [...broadcastKeys.all, id, 'preview', updatedAt, contactId] as const,
  preflight: (id: string, updatedAt: string) => [...broadcastKeys.all, id, 'preflight', updatedAt] as const,
  audienceCount: (id: string, updatedAt: string) => [...broadcastKeys.all, id, 'audience-count', updatedAt] as const,
  timeline: (id: string, bucket: 'hour' | 'day', tz: string) =>
    [...broadcastKeys.all, id, 'timeline', bucket, tz] as const,
  links: (id: string) => [...broadcastKeys.all, id, 'links'] as const,
  deliveries: (id: string, status: string, live: boolean) =>
    [...broadcastKeys.all, id, 'deliveries', status, live ? 'live' : 'final'] as const,
};

export const automationKeys = {
  all: ['automations'] as const,
  lists: () => [...automationKeys.all, 'list'] as const,
  list: (status: string) => [...automationKeys.lists(), status] as const,
  detail: (id: string) => [...automationKeys.all, 'detail', id] as const,
  stats: (id: string) => [...automationKeys.all, id, 'stats'] as const,
  runs: (id: string, status: string) => [...automationKeys.all, id, 'runs', status] as const,
};

export const formKeys = {
  /** The lists of forms and the form-group picker: what creating, publishing or saving a form makes stale. */
  lists: () => ['forms', 'list'] as const,
  list: (status: string) => [...formKeys.lists(), { status }] as const,
  /** One entry per form group, named after its newest version (the form.submitted trigger's picker). */
  groups: () => [...formKeys.lists(), 'groups'] as const,
  detail: (id: string) => ['forms', 'detail', id] as const,
  html: (id: string) => ['forms', 'html', id] as const,
  /** Every form's versions (a publish changes a whole group's), or one form's. */
  versions: (id?: string) =>
    id === undefined ? (['forms', 'versions'] as const) : (['forms', 'versions', id] as const),
  /** Every group's submissions (protection settings change which are held), or one group's. */
  submissions: (groupId?: string, held?: boolean) =>
    groupId === undefined
      ? (['forms', 'submissions'] as const)
      : (['forms', 'submissions', groupId, held ? 'HELD' : 'all'] as const),
  summary: (id: string) => ['forms', 'summary', id] as const,
};

export const domainKeys = {
  /** The list and the verified names (pickers): what adding, verifying or removing a domain makes stale. */
  lists: () => ['domains', 'list'] as const,
  list: () => [...domainKeys.lists(), 'all'] as const,
  verified: () => [...domainKeys.lists(), 'verified'] as const,
  detail: (id: string) => ['domains', 'detail', id] as const,
  /** What receivers reported of the domain (DMARC aggregate reports) over a range of days. */
  dmarc: (id: string, from: string, to: string) => ['domains', 'dmarc', id, from, to] as const,
};

/** The suppression list (GET /v1/suppressions): a page of it under a filter. */
export const suppressionKeys = {
  all: ['suppressions'] as const,
  list: (params: { q: string; reason: string; since: string; before: string; cursor: string | undefined }) =>
    [...suppressionKeys.all, 'list', params] as const,
};

/** Transactional emails (GET /v1/emails): the log under a filter, and one email. */
export const emailKeys = {
  all: ['emails'] as const,
  list: (params: { recipient: string; status: string; templateId: string; tag: string }) =>
    [...emailKeys.all, 'list', params] as const,
  detail: (id: string) => [...emailKeys.all, 'detail', id] as const,
  events: (id: string) => [...emailKeys.all, 'detail', id, 'events'] as const,
};

/** What the bounce processor kept for review (GET /v1/inbound). */
export const inboundKeys = {
  list: () => ['inbound', 'list'] as const,
};

export const webhookKeys = {
  list: () => ['webhooks', 'list'] as const,
  detail: (id: string) => ['webhooks', 'detail', id] as const,
  deliveries: (id: string) => ['webhooks', 'deliveries', id] as const,
  /**
   * Where a webhook secret just made by POST /v1/webhooks waits, in the cache (memory only: not the URL, not the
   * history), for the endpoint's page to show it once. GET never carries a secret (issue 29).
   */
  newSecret: (id: string) => ['webhooks', 'new-secret', id] as const,
};

export const apiKeyKeys = {
  list: () => ['api-keys', 'list'] as const,
};

export const emailDocumentKeys = {
  /** A block document rendered for the editor's preview: keyed by the document's JSON and the contact. */
  render: (documentJson: string, contactId: string) => ['email-documents', 'render', documentJson, contactId] as const,
};

export const templateKeys = {
  picker: () => ['templates', 'picker'] as const,
  /** Every template query: what creating, saving or deleting a template makes stale (the pickers included). */
  all: ['templates'] as const,
  list: () => [...templateKeys.all, 'list'] as const,
  detail: (id: string) => [...templateKeys.all, 'detail', id] as const,
  /** The starter documents of GET /v1/templates/gallery (not the workspace's: no write makes them stale). */
  gallery: () => ['template-gallery'] as const,
};

export const documentKeys = {
  /** A block document rendered for a preview; `key` names what it previews (a starter, a template's version). */
  render: (key: string) => ['email-documents', 'render', key] as const,
};

export const imageKeys = {
  all: ['images'] as const,
  list: () => [...imageKeys.all, 'list'] as const,
};

export const userKeys = {
  list: () => ['users', 'list'] as const,
  invitations: () => ['users', 'invitations'] as const,
  /** The signed-in user's own sessions. */
  sessions: () => ['users', 'my-sessions'] as const,
  /** The signed-in user's two-factor sign-in. */
  twoFactor: () => ['users', 'my-two-factor'] as const,
};

/** The signed-in session (GET /v1/session): the user, their role and grants, the workspace's name. */
export const sessionKeys = {
  all: ['session'] as const,
  current: () => [...sessionKeys.all, 'current'] as const,
};

export const workspaceKeys = {
  detail: () => ['workspace'] as const,
  defaultFrom: () => ['workspace', 'default-from'] as const,
  health: () => ['workspace', 'health'] as const,
};

export const auditKeys = {
  all: ['audit-log'] as const,
  list: (filter: { action: string; actor: string; from: string; to: string }) =>
    [...auditKeys.all, 'list', filter] as const,
};
