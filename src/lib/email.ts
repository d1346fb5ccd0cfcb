import { domainToASCII } from 'node:url';
import addrs from 'email-addresses';

export interface Mailbox {
  /** The display name, if the input had one (`Acme News <news@acme.com>`). */
  name: string | null;
  /** local@domain with the domain in lower-case ASCII (punycode for IDNs). */
  address: string;
  local: string;
  domain: string;
}

/**
 * A local part as Formcast stores it: an RFC 5322 dot-atom (letters, digits and `!#$%&'*+/=?^_\`{|}~-`,
 * dot-separated), UTF-8 allowed (RFC 6532). A quoted local part is accepted only when its content is such a
 * dot-atom (`"john"@x` is `john@x`); anything that needs the quotes (`"john smith"@x`, `"a,b"@x`) is refused:
 * mail software re-parses addresses at every hop, and a quoted comma or angle bracket turned one stored
 * address into several recipients (docs/security.md).
 */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uFFFF-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uFFFF-]+)*$/u;

/**
 * Parses one RFC 5322 mailbox (`addr@domain` or `Display Name <addr@domain>`, UTF-8 allowed per RFC 6532)
 * with a real address parser. Returns null for anything else: groups, lists, comments-only, no domain dot,
 * a local part that is not a dot-atom (see DOT_ATOM), NUL or malformed Unicode anywhere.
 */
export function parseMailbox(input: string): Mailbox | null {
  if (input.length > 998 || /[\r\n]/.test(input) || input.includes('\u0000') || !input.isWellFormed()) return null;
  const plain = plainMailbox(input.trim());
  return plain !== undefined ? plain : parsedMailbox(input.trim());
}

/** An ASCII dot-atom local part, `@`, and a domain of letters, digits and hyphens in two labels or more. */
const PLAIN_ADDRESS =
  /^([A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)$/;
/** A display name of ASCII letters and digits in words one space apart, then ` <address>`. */
const PLAIN_NAMED = /^([A-Za-z0-9]+(?: [A-Za-z0-9]+)*) <([^<>\s]+)>$/;

/**
 * The mailbox of the commonest inputs (`ada@example.com`, `Acme News <news@acme.com>`) read without the parser, which
 * took ~70 µs an address (a tenth of the CPU of accepting a transactional email: bench/README.md, bench:emails): the
 * same answer as parsedMailbox (a property test compares them), or undefined when the input is not of that shape.
 */
function plainMailbox(input: string): Mailbox | null | undefined {
  const named = PLAIN_NAMED.exec(input);
  const m = PLAIN_ADDRESS.exec(named ? named[2]! : input);
  if (!m) return undefined;
  const local = m[1]!;
  if (local.length > 64) return null;
  const domain = domainToASCII(m[2]!.toLowerCase());
  if (!domain || !domain.includes('.') || domain.length > 253) return null;
  return { name: named ? named[1]! : null, address: `${local}@${domain}`, local, domain };
}

/** The mailbox as the RFC 5322 parser reads it (every input parseMailbox takes; the reference of plainMailbox). */
export function parsedMailbox(input: string): Mailbox | null {
  const parsed = addrs.parseOneAddress({ input, rfc6532: true, rejectTLD: true });
  if (!parsed || parsed.type !== 'mailbox') return null;
  if (!DOT_ATOM.test(parsed.local) || parsed.local.length > 64) return null;
  const domain = domainToASCII(parsed.domain.toLowerCase());
  if (!domain || !domain.includes('.') || domain.length > 253) return null;
  return { name: parsed.name || null, address: `${parsed.local}@${domain}`, local: parsed.local, domain };
}

/**
 * A contact's email as stored and compared: a bare address, lower-cased whole. Mailbox providers treat
 * local parts case-insensitively in practice, and docs/api.md §7 makes emails unique case-insensitively.
 */
export function normalizeEmail(input: string): string | null {
  const mailbox = parseMailbox(input);
  if (!mailbox || mailbox.name) return null;
  return mailbox.address.toLowerCase();
}
