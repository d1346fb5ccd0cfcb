/** The workspace's settings: name, public archive address, default sender, locale, time zone, brand colour, tracking. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, api, unwrap } from '../../api/client';
import { sessionKeys, workspaceKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import type { paths } from '../../api/generated/schema';
import { Button, Checkbox, ErrorSummary, Input, NotAllowed, Select, Textarea, useToast } from '../../components';
import { formatDate } from '../../lib/format';
import { nullable, problemOf } from '../../lib/forms';
import { timeZoneOptions } from '../../lib/zones';

type Workspace = paths['/v1/workspace']['get']['responses'][200]['content']['application/json'];
type Locale = Workspace['settings']['locale'];

const HEX = /^#[0-9a-fA-F]{6}$/;
/** A workspace's slug (PUT /v1/workspace): lower-case words joined by hyphens, as a form's address. */
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** What the colour picker shows while the workspace has no brand colour: the renderer's own blue (mail/blocks). */
const DEFAULT_BRAND = '#1f6feb';

const LOCALES: { value: Locale; label: string }[] = [
  { value: 'en', label: 'English' },
  { value: 'de', label: 'Deutsch' },
  { value: 'fr', label: 'Français' },
  { value: 'es', label: 'Español' },
];

export function SettingsForm({ ws }: { ws: Workspace }) {
  const can = useCan();
  const editable = can('manage:workspace');
  const toast = useToast();
  const qc = useQueryClient();
  const [name, setName] = useState(ws.name);
  const [slug, setSlug] = useState(ws.slug ?? '');
  const [postal, setPostal] = useState(ws.settings.postalAddress ?? '');
  const [locale, setLocale] = useState<Locale>(ws.settings.locale);
  const [from, setFrom] = useState(ws.settings.defaultFrom ?? '');
  const [opens, setOpens] = useState(ws.settings.tracking.opens);
  const [clicks, setClicks] = useState(ws.settings.tracking.clicks);
  const [brand, setBrand] = useState(ws.settings.brandColor ?? '');
  const [require2fa, setRequire2fa] = useState(ws.settings.requireTwoFactor);
  const [timezone, setTimezone] = useState(ws.settings.timezone);
  useEffect(() => {
    setTimezone(ws.settings.timezone);
    setRequire2fa(ws.settings.requireTwoFactor);
    setName(ws.name);
    setSlug(ws.slug ?? '');
    setPostal(ws.settings.postalAddress ?? '');
    setLocale(ws.settings.locale);
    setFrom(ws.settings.defaultFrom ?? '');
    setOpens(ws.settings.tracking.opens);
    setClicks(ws.settings.tracking.clicks);
    setBrand(ws.settings.brandColor ?? '');
  }, [ws]);
  const slugValue = slug.trim();
  const slugFormatError =
    slugValue && (!SLUG.test(slugValue) || slugValue.length < 2)
      ? 'Use at least two lower-case letters or digits, with single hyphens between words (acme-news).'
      : null;
  const brandHex = brand.trim();
  const brandError = brandHex && !HEX.test(brandHex) ? 'A colour as # and six hex digits, such as #2f4fd6.' : null;

  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PUT('/v1/workspace', {
          body: {
            name: name.trim(),
            slug: slugValue || null,
            settings: {
              postalAddress: nullable(postal),
              locale,
              defaultFrom: nullable(from),
              tracking: { opens, clicks },
              brandColor: brandHex ? brandHex.toLowerCase() : null,
              requireTwoFactor: require2fa,
              timezone,
            },
          },
        }),
      ),
    onSuccess: (data) => {
      qc.setQueryData(workspaceKeys.detail(), data);
      // The sidebar and the top bar show the workspace's name from the session: refetched, not kept until a reload.
      void qc.invalidateQueries({ queryKey: sessionKeys.all });
      toast.success('Settings saved.');
    },
  });
  const { fields, message, rest } = problemOf(save.error, {
    '/name': 'Name',
    '/slug': {
      label: 'Archive address',
      messages: { pattern: 'Archive address must be lower-case words joined by hyphens.' },
    },
    '/settings/postalAddress': 'Postal address',
    '/settings/locale': 'Language',
    '/settings/timezone': 'Time zone',
    '/settings/defaultFrom': 'Default sender',
    '/settings/tracking': 'Tracking',
    '/settings/brandColor': {
      label: 'Brand colour',
      messages: { pattern: 'Brand colour must be a colour like #2f4fd6.' },
    },
    '/settings/requireTwoFactor': 'Require two-factor sign-in',
  });

  // The service's slug_taken is about forms too: here it is another workspace's address.
  const slugTaken =
    save.error instanceof ApiError && save.error.problem.code === 'slug_taken'
      ? 'Another workspace already uses this address. Choose another one.'
      : null;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (brandError || slugFormatError) return;
    save.mutate();
  };

  return (
    <form className="stack" onSubmit={submit} noValidate aria-describedby={editable ? undefined : 'settings-readonly'}>
      {!editable && (
        <div id="settings-readonly">
          <NotAllowed action="manage:workspace" />
        </div>
      )}
      <ErrorSummary message={message} errors={rest} />
      <section className="card stack">
        <h2>Workspace</h2>
        <Input
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={200}
          disabled={!editable}
          error={fields['/name']}
        />
        <p className="muted small">
          Workspace ID <code>{ws.id}</code> · created {formatDate(ws.createdAt)}
        </p>
      </section>
      <section className="card stack">
        <h2>Public archive</h2>
        <Input
          label="Archive address"
          hint={
            slugValue && !slugFormatError
              ? `Your archive page: ${location.origin}/archive/${slugValue} (with an Atom feed). Broadcasts appear there once sent, if “Show in the public archive” is on.`
              : 'The last part of your public archive page’s address, e.g. acme-news. Empty: no archive.'
          }
          value={slug}
          onChange={(e) => setSlug(e.target.value)}
          maxLength={100}
          spellCheck={false}
          autoComplete="off"
          disabled={!editable}
          error={slugFormatError ?? slugTaken ?? fields['/slug']}
        />
        {ws.slug && !slugFormatError && slugValue === ws.slug && (
          <p className="small">
            <a href={`/archive/${ws.slug}`} target="_blank" rel="noreferrer">
              Open the archive page
            </a>
          </p>
        )}
      </section>
      <section className="card stack">
        <h2>Email defaults</h2>
        <Input
          label="Default sender"
          hint="Used for confirmation emails and as the first choice for broadcasts, e.g. News <news@example.com>. Its domain must be verified."
          value={from}
          onChange={(e) => setFrom(e.target.value)}
          disabled={!editable}
          error={fields['/settings/defaultFrom']}
        />
        <Textarea
          label="Postal address"
          hint="Shown in the footer of every email, as anti-spam laws require."
          value={postal}
          onChange={(e) => setPostal(e.target.value)}
          rows={3}
          disabled={!editable}
          error={fields['/settings/postalAddress']}
        />
        <Select
          label="Language of public pages and footers"
          value={locale}
          onChange={(e) => setLocale(e.target.value as Locale)}
          options={LOCALES}
          disabled={!editable}
          error={fields['/settings/locale']}
        />
        <Select
          label="Time zone"
          hint="Used by broadcasts sent at local time: contacts without a time zone of their own get them at the chosen time in this zone."
          value={timezone}
          onChange={(e) => setTimezone(e.target.value)}
          options={timeZoneOptions(timezone)}
          disabled={!editable}
          error={fields['/settings/timezone']}
        />
      </section>
      <section className="card stack">
        <h2>Brand</h2>
        <div className="field">
          <label htmlFor="brand-color">Brand colour</label>
          <div className="color-field">
            <input
              type="color"
              aria-label="Pick the brand colour"
              value={HEX.test(brandHex) ? brandHex.toLowerCase() : DEFAULT_BRAND}
              onChange={(e) => setBrand(e.target.value)}
              disabled={!editable}
            />
            <input
              id="brand-color"
              className="input"
              value={brand}
              placeholder={DEFAULT_BRAND}
              onChange={(e) => setBrand(e.target.value)}
              disabled={!editable}
              maxLength={7}
              spellCheck={false}
              autoComplete="off"
              aria-invalid={brandError || fields['/settings/brandColor'] ? true : undefined}
              aria-describedby={[
                'brand-color-hint',
                brandError || fields['/settings/brandColor'] ? 'brand-color-error' : null,
              ]
                .filter(Boolean)
                .join(' ')}
            />
            {editable && brand && (
              <Button size="sm" variant="ghost" onClick={() => setBrand('')}>
                Clear
              </Button>
            )}
          </div>
          <div className="hint" id="brand-color-hint">
            The colour of buttons and links in new visual emails, as a hex value (#rrggbb). Empty: Formcast's blue.
          </div>
          {(brandError || fields['/settings/brandColor']) && (
            <div className="error" id="brand-color-error">
              {brandError ?? fields['/settings/brandColor']}
            </div>
          )}
        </div>
      </section>
      <section className="card stack">
        <h2>Tracking defaults</h2>
        <p className="muted">New broadcasts start with these; each broadcast can change them.</p>
        <Checkbox
          label="Track opens"
          hint="A tiny image in each email counts opens (machine opens, such as Apple Mail Privacy Protection, are counted apart)."
          checked={opens}
          onChange={(e) => setOpens(e.target.checked)}
          disabled={!editable}
        />
        <Checkbox
          label="Track link clicks"
          hint="Links are rewritten to pass through this server."
          checked={clicks}
          onChange={(e) => setClicks(e.target.checked)}
          disabled={!editable}
        />
        {fields['/settings/tracking'] && <p className="error">{fields['/settings/tracking']}</p>}
      </section>
      <section className="card stack">
        <h2>Sign-in security</h2>
        <Checkbox
          label="Require two-factor sign-in for everyone"
          hint="People without it are asked to set it up right after signing in, and can do nothing else until they have. Set it up for yourself first, on your profile."
          checked={require2fa}
          onChange={(e) => setRequire2fa(e.target.checked)}
          disabled={!editable}
        />
      </section>
      {editable && (
        <div className="form-actions">
          <Button type="submit" variant="primary" loading={save.isPending}>
            Save settings
          </Button>
        </div>
      )}
    </form>
  );
}
