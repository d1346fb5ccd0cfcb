/**
 * The panel beside the canvas: the selected block's fields (an image's picture, alt text, width and link; a button's
 * text, link and colours; …), or the email's own settings (width, colours, font, brand colour). Every change is one
 * history step, typing in one field one step per burst.
 */
import { Link } from 'react-router';
import { Button } from '../Button';
import { Checkbox, Input, Select, Textarea } from '../Field';
import { buttonTextColor, defaultAlign, DEFAULTS, type UploadState } from './BlockView';
import {
  FONT_FAMILIES,
  LIMITS,
  NETWORK_LABELS,
  SOCIAL_NETWORKS,
  type Block,
  type DocumentSettings,
  type FontFamily,
  type SocialNetwork,
} from './document';
import { AlignField, ColorField, NumberField } from './fields';
import { BLOCK_LABELS, setColumnCount } from './operations';

const WIDTH_PRESETS: Record<2 | 3, { label: string; widths: number[] | undefined }[]> = {
  2: [
    { label: 'Equal', widths: undefined },
    { label: 'Narrow, wide (⅓ ⅔)', widths: [33, 67] },
    { label: 'Wide, narrow (⅔ ⅓)', widths: [67, 33] },
  ],
  3: [
    { label: 'Equal', widths: undefined },
    { label: 'Wide in the middle (¼ ½ ¼)', widths: [25, 50, 25] },
    { label: 'Wide first (½ ¼ ¼)', widths: [50, 25, 25] },
  ],
};

export function BlockFields({
  block,
  edit,
  settings,
  upload,
  pickFile,
  taken,
  problems,
  postalAddress,
}: {
  block: Block;
  edit: (patch: Partial<Block>, key?: string) => void;
  settings: DocumentSettings;
  upload?: UploadState;
  pickFile: () => void;
  taken: Set<string>;
  problems: string[];
  postalAddress: string | null;
}) {
  const id = block.id!;
  const key = (field: string) => `${id}:${field}`;
  const brand = settings.brandColor ?? DEFAULTS.brand;
  const align = (
    <AlignField
      value={('align' in block ? block.align : undefined) ?? defaultAlign(block.type)}
      onChange={(a) => edit({ align: a } as Partial<Block>)}
    />
  );
  let body;
  switch (block.type) {
    case 'heading':
      body = (
        <>
          <Select
            label="Size"
            value={String(block.level ?? 1)}
            onChange={(e) => edit({ level: Number(e.target.value) as 1 | 2 | 3 })}
            options={[
              { value: '1', label: 'Large (title)' },
              { value: '2', label: 'Medium (section)' },
              { value: '3', label: 'Small' },
            ]}
          />
          {align}
          <p className="muted small">Type the heading on the canvas. Merge tags go in at the cursor.</p>
        </>
      );
      break;
    case 'text':
      body = (
        <>
          {align}
          <p className="muted small">
            Type on the canvas. Select words and use <strong>B</strong>, <em>I</em> or Link in the toolbar (or Ctrl+B,
            Ctrl+I). Enter starts a paragraph, Shift+Enter a new line.
          </p>
        </>
      );
      break;
    case 'image':
      body = (
        <>
          <div className="field">
            <span className="label">Picture</span>
            {block.url && <img className="ee-thumb" src={block.url} alt="" />}
            <div className="row">
              <Button size="sm" onClick={pickFile} disabled={!!upload && !upload.error}>
                {block.url ? 'Replace the image…' : 'Choose an image…'}
              </Button>
              <span className="muted small">or drop a file on the block.</span>
            </div>
            {upload?.error && (
              <div className="error" role="alert">
                {upload.error}
              </div>
            )}
          </div>
          <Input
            label="Image address"
            type="url"
            value={block.url}
            onChange={(e) => edit({ url: e.target.value }, key('url'))}
            placeholder="https://…"
            hint="Filled in by an upload; or the address of an image elsewhere (https)."
          />
          <Input
            label="Alternative text"
            value={block.alt}
            onChange={(e) => edit({ alt: e.target.value }, key('alt'))}
            maxLength={500}
            hint="What the image shows, for people who cannot see it and for inboxes that block images."
            data-merge-target
          />
          <Checkbox
            label="As wide as the column"
            checked={block.width === undefined}
            onChange={(e) => edit({ width: e.target.checked ? undefined : Math.min(settings.width ?? 600, 300) })}
          />
          {block.width !== undefined && (
            <NumberField
              label="Width"
              unit="px"
              value={block.width}
              min={16}
              max={600}
              onChange={(width) => edit({ width }, key('width'))}
            />
          )}
          <Input
            label="Link"
            type="url"
            value={block.href ?? ''}
            onChange={(e) => edit({ href: e.target.value || undefined }, key('href'))}
            placeholder="https://…"
            hint="Optional: where a tap on the image goes."
            data-merge-target
          />
          {align}
        </>
      );
      break;
    case 'button':
      body = (
        <>
          <Input
            label="Button text"
            value={block.text}
            onChange={(e) => edit({ text: e.target.value }, key('text'))}
            maxLength={200}
            data-merge-target
          />
          <Input
            label="Link"
            type="url"
            value={block.url}
            onChange={(e) => edit({ url: e.target.value }, key('url'))}
            placeholder="https://…"
            hint="Where the button goes (https, or a merge tag)."
            data-merge-target
          />
          <ColorField
            label="Button colour"
            value={block.color}
            fallback={brand}
            onChange={(color) => edit({ color }, key('color'))}
            resetLabel="Brand colour"
          />
          <ColorField
            label="Text colour"
            value={block.textColor}
            fallback={buttonTextColor(block.color ?? brand)}
            onChange={(textColor) => edit({ textColor }, key('textColor'))}
            resetLabel="Automatic"
          />
          {align}
        </>
      );
      break;
    case 'divider':
      body = (
        <ColorField
          label="Line colour"
          value={block.color}
          fallback={DEFAULTS.divider}
          onChange={(color) => edit({ color }, key('color'))}
        />
      );
      break;
    case 'spacer':
      body = (
        <NumberField
          label="Height"
          unit="px"
          value={block.height}
          min={4}
          max={200}
          onChange={(height) => edit({ height }, key('height'))}
        />
      );
      break;
    case 'columns': {
      const n = block.columns.length === 3 ? 3 : 2;
      const preset = WIDTH_PRESETS[n].findIndex((p) => JSON.stringify(p.widths) === JSON.stringify(block.widths));
      body = (
        <>
          <Select
            label="Columns"
            value={String(n)}
            onChange={(e) => edit(setColumnCount(block, Number(e.target.value) as 2 | 3, taken))}
            options={[
              { value: '2', label: 'Two' },
              { value: '3', label: 'Three' },
            ]}
            hint={n === 3 ? 'With two, the blocks of the third column move to the second.' : undefined}
          />
          <Select
            label="Widths"
            value={String(Math.max(0, preset))}
            onChange={(e) => edit({ widths: WIDTH_PRESETS[n][Number(e.target.value)]!.widths })}
            options={WIDTH_PRESETS[n].map((p, i) => ({ value: String(i), label: p.label }))}
          />
          <p className="muted small">On a phone the columns stack, first column on top.</p>
        </>
      );
      break;
    }
    case 'social': {
      const links = block.links;
      const set = (i: number, patch: Partial<{ network: SocialNetwork; url: string }>) =>
        edit({ links: links.map((l, j) => (j === i ? { ...l, ...patch } : l)) }, key(`links/${i}`));
      body = (
        <>
          {links.map((l, i) => (
            <fieldset key={i} className="ee-social-row">
              <legend>Link {i + 1}</legend>
              <div className="stack-sm">
                <Select
                  label="Network"
                  value={l.network}
                  onChange={(e) => set(i, { network: e.target.value as SocialNetwork })}
                  options={SOCIAL_NETWORKS.map((n) => ({ value: n, label: NETWORK_LABELS[n] }))}
                />
                <Input
                  label="Address"
                  type="url"
                  value={l.url}
                  onChange={(e) => set(i, { url: e.target.value })}
                  placeholder="https://…"
                />
                <div>
                  <Button
                    size="sm"
                    variant="ghost"
                    onClick={() => edit({ links: links.filter((_, j) => j !== i) })}
                    aria-label={`Remove link ${i + 1} (${NETWORK_LABELS[l.network]})`}
                  >
                    Remove
                  </Button>
                </div>
              </div>
            </fieldset>
          ))}
          <div>
            <Button
              size="sm"
              disabled={links.length >= LIMITS.socialLinks}
              onClick={() => edit({ links: [...links, { network: 'website', url: '' }] })}
            >
              + Link
            </Button>
          </div>
          {align}
          <p className="muted small">Links without an address are left out of the email.</p>
        </>
      );
      break;
    }
    case 'html':
      body = (
        <Textarea
          label="HTML"
          className="ee-html-field"
          value={block.html}
          onChange={(e) => edit({ html: e.target.value }, key('html'))}
          rows={12}
          spellCheck={false}
          hint="Sanitised like a form's HTML: no scripts, event handlers or javascript: links (the save says so). Liquid works."
        />
      );
      break;
    case 'footer':
      body = (
        <>
          <Input
            label="Extra line (optional)"
            value={block.text ?? ''}
            onChange={(e) => edit({ text: e.target.value || undefined }, key('text'))}
            maxLength={2000}
            hint="Above the address, e.g. why the reader gets this email."
            data-merge-target
          />
          <Checkbox
            label="“View in browser” link"
            hint="Each reader’s own copy of the email on a web page (left out on that page itself)."
            checked={block.webVersion === true}
            onChange={(e) => edit({ webVersion: e.target.checked || undefined })}
          />
          {align}
          <p className="muted small">
            The footer prints your postal address{' '}
            {postalAddress ? (
              <>
                (<span className="break">{postalAddress}</span>)
              </>
            ) : (
              <>
                (none yet: <Link to="/settings">set it in Settings</Link>)
              </>
            )}{' '}
            and the unsubscribe link. Every email has one and it cannot be removed.
          </p>
        </>
      );
      break;
  }
  return (
    <div className="stack-sm">
      <h3 className="ee-panel-title">{BLOCK_LABELS[block.type]}</h3>
      {problems.length > 0 && (
        <div className="error-summary" role="alert">
          <ul>
            {problems.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        </div>
      )}
      {body}
    </div>
  );
}

export function DocumentFields({
  settings,
  onChange,
  workspaceBrand,
}: {
  settings: DocumentSettings;
  onChange: (patch: Partial<DocumentSettings>, key?: string) => void;
  workspaceBrand: string | null;
}) {
  return (
    <div className="stack-sm">
      <h3 className="ee-panel-title">Email settings</h3>
      <NumberField
        label="Content width"
        unit="px"
        value={settings.width ?? DEFAULTS.width}
        min={320}
        max={600}
        onChange={(width) => onChange({ width: width === 600 ? undefined : width }, 'doc:width')}
        hint="600 px suits most inboxes; on a phone the email narrows to fit."
      />
      <Select
        label="Font"
        value={settings.fontFamily ?? 'sans'}
        onChange={(e) => onChange({ fontFamily: e.target.value as FontFamily })}
        options={Object.entries(FONT_FAMILIES).map(([v, f]) => ({ value: v, label: f.label }))}
        hint="Fonts every inbox has."
      />
      <ColorField
        label="Brand colour"
        value={settings.brandColor}
        fallback={workspaceBrand ?? DEFAULTS.brand}
        onChange={(brandColor) => onChange({ brandColor: brandColor ?? workspaceBrand ?? undefined }, 'doc:brand')}
        resetLabel={workspaceBrand ? 'Workspace colour' : 'Default'}
        resettable={settings.brandColor !== (workspaceBrand ?? undefined)}
        hint="Buttons, social icons and links, unless they have their own."
      />
      <ColorField
        label="Text colour"
        value={settings.textColor}
        fallback={DEFAULTS.text}
        onChange={(textColor) => onChange({ textColor }, 'doc:text')}
      />
      <ColorField
        label="Link colour"
        value={settings.linkColor}
        fallback={settings.brandColor ?? DEFAULTS.brand}
        onChange={(linkColor) => onChange({ linkColor }, 'doc:link')}
        resetLabel="Brand colour"
      />
      <ColorField
        label="Background"
        value={settings.backgroundColor}
        fallback={DEFAULTS.background}
        onChange={(backgroundColor) => onChange({ backgroundColor }, 'doc:bg')}
        hint="Around the content."
      />
      <ColorField
        label="Content background"
        value={settings.contentBackgroundColor}
        fallback={DEFAULTS.card}
        onChange={(contentBackgroundColor) => onChange({ contentBackgroundColor }, 'doc:card')}
      />
      <p className="muted small">Readers in dark mode get darker colours where their inbox supports it.</p>
    </div>
  );
}
