import { normalizeEmail } from '../../lib/email.js';

/**
 * normalizeEmail (lib/email.ts) is the authority on a contact's email, but its full RFC 5322 parser costs
 * ~25 µs an address: half a minute on a 1,000,000-row import. Most addresses are a plain dot-atom at an
 * ASCII host name, for which normalizeEmail's answer is known in advance: the trimmed input, lower-cased.
 * Those take the fast path below; everything else (quoted local parts, IDNs, odd characters, punycode,
 * numeric TLDs, over-long parts, CR/LF) goes to normalizeEmail. test/api/contacts.test.ts checks that
 * both agree.
 */
const LOCAL = /^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const TLD = /^[A-Za-z]{2,63}$/;

export function contactEmail(input: string): string | null {
  if (input.length <= 320 && !input.includes('\n') && !input.includes('\r')) {
    const trimmed = input.trim();
    const at = trimmed.indexOf('@');
    if (at > 0 && at <= 64 && at === trimmed.lastIndexOf('@')) {
      const local = trimmed.slice(0, at);
      const domain = trimmed.slice(at + 1);
      if (domain.length <= 253 && LOCAL.test(local) && fastDomain(domain)) return trimmed.toLowerCase();
    }
  }
  return normalizeEmail(input);
}

function fastDomain(domain: string): boolean {
  const labels = domain.split('.');
  if (labels.length < 2 || !TLD.test(labels[labels.length - 1]!)) return false;
  for (const label of labels) {
    if (!LABEL.test(label) || /^xn--/i.test(label)) return false;
  }
  return true;
}
