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

/** The word for "Unsubscribe" in the document's language (the public pages' texts), English otherwise. */
export function unsubscribeLabel(lang: string | undefined): string {
  const base = (lang ?? 'en').toLowerCase().split('-')[0] as Locale;
  return TEXTS[(LOCALES as readonly string[]).includes(base) ? base : 'en'].unsubscribe;
}

/** The footer's unsubscribe line is printed only where the message has an unsubscribe URL (not a confirmation). */
export const IF_UNSUBSCRIBE = '{% if unsubscribe_url %}';
export const END_IF = '{% endif %}';
