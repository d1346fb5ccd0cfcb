/**
 * Duplicating a form or a broadcast in the console: the API has no copy operation, so the copy is read (GET) and
 * created (POST) as a new DRAFT named "Copy of …" with all its content and settings, and none of its history (no
 * submissions, stats or deliveries). A form's copy gets a new public address (slug), and its custom HTML if it has
 * some; a broadcast whose sender's domain is no longer verified is copied without a sender.
 */
import { ApiError, api, unwrap } from '../api/client';
import type { paths } from '../api/generated/schema';

type Form = paths['/v1/forms/{formId}']['get']['responses'][200]['content']['application/json'];
type Broadcast = paths['/v1/broadcasts/{broadcastId}']['get']['responses'][200]['content']['application/json'];

/** "Copy of <name>", cut to `max` characters. */
export function copyName(name: string, max: number): string {
  return `Copy of ${name}`.slice(0, max);
}

/** A new slug for a copy: "<slug>-copy", then "<slug>-copy-2" … (up to 100 characters, the contract's limit). */
export function copySlug(slug: string, attempt: number): string {
  const suffix = attempt === 0 ? '-copy' : `-copy-${attempt + 1}`;
  return `${slug.slice(0, 100 - suffix.length).replace(/-+$/, '')}${suffix}`;
}

export async function duplicateForm(formId: string): Promise<Form> {
  const form = unwrap(await api.GET('/v1/forms/{formId}', { params: { path: { formId } } }));
  const html = unwrap(await api.GET('/v1/forms/{formId}/html', { params: { path: { formId } } }));
  const body = {
    name: copyName(form.name, 200),
    type: form.type,
    description: form.description,
    display: form.display,
    fieldMapping: form.fieldMapping,
    settings: form.settings,
    doubleOptInEmailId: form.doubleOptInEmailId,
    seoTitle: form.seoTitle,
    seoDescription: form.seoDescription,
    seoImageUrl: form.seoImageUrl,
    seoFaviconUrl: form.seoFaviconUrl,
  };
  let copy: Form | undefined;
  // A slug is unique across every workspace: another attempt when "-copy" is taken, then none (set it later).
  for (let attempt = 0; !copy; attempt++) {
    const slug = form.slug && attempt < 5 ? copySlug(form.slug, attempt) : null;
    try {
      copy = unwrap(await api.POST('/v1/forms', { body: { ...body, slug } }));
    } catch (err) {
      if (!(slug && err instanceof ApiError && err.code === 'slug_taken')) throw err;
    }
  }
  if (html.deployedAt && html.html)
    unwrap(
      await api.PUT('/v1/forms/{formId}/html', { params: { path: { formId: copy.id } }, body: { html: html.html } }),
    );
  return copy;
}

export async function duplicateBroadcast(broadcastId: string): Promise<{ copy: Broadcast; senderDropped: boolean }> {
  const b = unwrap(await api.GET('/v1/broadcasts/{broadcastId}', { params: { path: { broadcastId } } }));
  const body = {
    name: copyName(b.name, 255),
    from: b.from,
    replyTo: b.replyTo,
    topicId: b.topicId,
    segmentId: b.segmentId,
    tracking: b.tracking,
    emailContent: b.emailContent,
    // An A/B test is copied whole (docs/ab-tests.md); its results are not.
    abTest: b.abTest,
  };
  try {
    return { copy: unwrap(await api.POST('/v1/broadcasts', { body })), senderDropped: false };
  } catch (err) {
    if (!((b.from || b.abTest) && err instanceof ApiError && err.code === 'sender_domain_not_verified')) throw err;
    // The variants' senders too: one of them may be the sender whose domain is no longer verified.
    const abTest = body.abTest && { ...body.abTest, variants: body.abTest.variants.map((v) => ({ ...v, from: null })) };
    return {
      copy: unwrap(await api.POST('/v1/broadcasts', { body: { ...body, from: null, abTest } })),
      senderDropped: true,
    };
  }
}
