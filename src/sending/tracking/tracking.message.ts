import { beforeBodyEnd, openPixel, pixelFits, rewriteLinks, trackableLinks } from './tracking.rewrite.js';
import { rewriteMarkedLinks, unmarkLinks } from './tracking.template.js';
import { tokenSigner, type TrackingRef } from './tracking.token.js';

export interface MessageTracking {
  secret: Buffer;
  publicUrl: string;
  /** Where the tracked links and the pixel point: the sending domain's tracking host; default `publicUrl`. */
  trackingUrl?: string;
  /** The recipient's unsubscribe URL: never rewritten (it must work without us, and scanners must not "click" it). */
  unsubscribeUrl: string;
  opens: boolean;
  clicks: boolean;
}

/**
 * Tracking of one message (docs/tracking.md), used by the delivery pipeline's compose: `links` rewrites the
 * rendered template's http(s) links to `{PUBLIC_URL}/t/c/{token}`, `pixel` adds the open pixel near the end of the
 * assembled document's body, unless the document is so short and image-less that the pixel would make spam filters
 * score it as an image-only message (tracking.rewrite.ts, pixelFits). Test sends and previews do not come here. Null when the ids cannot be carried by a
 * token (never for ids this service made).
 */
export function trackMessage(
  t: MessageTracking,
  ref: TrackingRef,
): {
  /** `marked`: `html` was rendered from a template markTemplateLinks marked (its links found once, not here). */
  links: (html: string, marked?: boolean) => string;
  pixel: <C extends { html: string | null }>(content: C) => C;
} | null {
  const sign = tokenSigner(t.secret, ref);
  if (!sign) return null;
  const publicBase = t.publicUrl.replace(/\/+$/, '');
  const base = (t.trackingUrl ?? t.publicUrl).replace(/\/+$/, '');
  const own = [`${base}/t/`, `${publicBase}/t/`];
  // The recipient's own pages are not rewritten: the unsubscribe page, and the web version (`/w/{token}`, a link per
  // recipient that would make the link report one row each: docs/archive.md).
  const unsubscribePages = [`${publicBase}/unsubscribe/`, `${base}/unsubscribe/`, `${publicBase}/w/`, `${base}/w/`];
  return {
    links(html, marked = false) {
      if (!t.clicks) return marked ? unmarkLinks(html) : html;
      const rules = {
        keep: (url: string) =>
          url === t.unsubscribeUrl ||
          unsubscribePages.some((p) => url.startsWith(p)) ||
          own.some((p) => url.startsWith(p)),
      };
      if (marked)
        return rewriteMarkedLinks(
          html,
          rules,
          (url, linkIndex, linkCount) => `${base}/t/c/${sign.click({ linkIndex, linkCount, url })}`,
        );
      const links = trackableLinks(html, rules);
      return rewriteLinks(
        html,
        links,
        (link, linkIndex) => `${base}/t/c/${sign.click({ linkIndex, linkCount: links.length, url: link.url })}`,
      );
    },
    pixel(content) {
      // A short HTML part without an image of its own gets no pixel (pixelFits): its opens are not counted.
      if (!t.opens || content.html == null || !pixelFits(content.html)) return content;
      return {
        ...content,
        html: beforeBodyEnd(content.html, openPixel(`${base}/t/o/${sign.open()}`)),
      };
    },
  };
}
