/**
 * Where a webhook secret just made by POST /v1/webhooks waits, in the query cache (memory only: not the URL, not the
 * history), for the endpoint's page to show it once. GET never carries a secret (issue 29).
 */
export const newSecretKey = (webhookId: string) => ['webhook-new-secret', webhookId] as const;
