import { LOCALES, TEXTS, type Locale } from '../../pages/i18n.js';
import type { SOCIAL_NETWORKS } from './grammar.js';

/** How each network is named: the icon's alt text and the text link. */
export const NETWORK_LABELS: Record<(typeof SOCIAL_NETWORKS)[number], string> = {
  facebook: 'Facebook',
  x: 'X',
  instagram: 'Instagram',
  linkedin: 'LinkedIn',
  youtube: 'YouTube',
  tiktok: 'TikTok',
  github: 'GitHub',
  mastodon: 'Mastodon',
  bluesky: 'Bluesky',
  website: 'Website',
};

/** The footer's Liquid, filled at the send (contract §16). */
export const FOOTER_ADDRESS = '{{ workspace.postal_address }}';
export const FOOTER_UNSUBSCRIBE_URL = '{{ unsubscribe_url }}';

/** The texts of the document's language (the public pages' texts), English otherwise. */
function textsOf(lang: string | undefined) {
  const base = (lang ?? 'en').toLowerCase().split('-')[0] as Locale;
  return TEXTS[(LOCALES as readonly string[]).includes(base) ? base : 'en'];
}

/** The word for "Unsubscribe" in the document's language. */
export function unsubscribeLabel(lang: string | undefined): string {
  return textsOf(lang).unsubscribe;
}

/** "View in browser" in the document's language (the footer's web version link). */
export function webVersionLabel(lang: string | undefined): string {
  return textsOf(lang).viewInBrowser;
}

/**
 * The footer's web version link: only where the message has a web version (a broadcast's or an automation's message,
 * not a confirmation), and not on the web page itself (`in_browser`, docs/archive.md).
 */
export const FOOTER_WEBVERSION_URL = '{{ webversion_url }}';
export const IF_WEBVERSION = '{% if webversion_url %}{% unless in_browser %}';
export const END_IF_WEBVERSION = '{% endunless %}{% endif %}';

/** The footer's unsubscribe line is printed only where the message has an unsubscribe URL (not a confirmation). */
export const IF_UNSUBSCRIBE = '{% if unsubscribe_url %}';
export const END_IF = '{% endif %}';
