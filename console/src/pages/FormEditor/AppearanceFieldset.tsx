/** What visitors see of a form (settings.appearance), with the live preview beside the fields. */
import { useId } from 'react';
import { Button, Input, Select, Textarea } from '../../components';
import { FormPreview } from '../../components/FormPreview';
import {
  DEFAULT_BRAND,
  contrastRatio,
  textOn,
  type FormAppearance,
  type Form as FormLook,
} from '@formcast/form-appearance';

type Theme = NonNullable<FormAppearance['theme']>;

export interface AppearanceDraft {
  heading: string;
  intro: string;
  buttonLabel: string;
  consentText: string;
  brandColor: string;
  logoUrl: string;
  theme: Theme;
}

export function appearanceDraft(a: FormAppearance | undefined): AppearanceDraft {
  return {
    heading: a?.heading ?? '',
    intro: a?.intro ?? '',
    buttonLabel: a?.buttonLabel ?? '',
    consentText: a?.consentText ?? '',
    brandColor: a?.brandColor ?? '',
    logoUrl: a?.logoUrl ?? '',
    theme: a?.theme ?? 'light',
  };
}

/** The appearance to send: empty texts left out; null when nothing differs from the defaults. */
export function appearanceBody(d: AppearanceDraft): FormAppearance | null {
  const out: FormAppearance = {};
  if (d.heading.trim()) out.heading = d.heading.trim();
  if (d.intro.trim()) out.intro = d.intro.trim();
  if (d.buttonLabel.trim()) out.buttonLabel = d.buttonLabel.trim();
  if (d.consentText.trim()) out.consentText = d.consentText.trim();
  if (d.brandColor.trim()) out.brandColor = d.brandColor.trim();
  if (d.logoUrl.trim()) out.logoUrl = d.logoUrl.trim();
  if (d.theme !== 'light') out.theme = d.theme;
  return Object.keys(out).length ? out : null;
}

const HEX = /^#[0-9a-fA-F]{6}$/;

export function AppearanceFieldset({
  draft,
  onChange,
  preview,
  errors,
  disabled,
}: {
  draft: AppearanceDraft;
  onChange: (d: AppearanceDraft) => void;
  preview: FormLook;
  errors: Record<string, string>;
  disabled: boolean;
}) {
  const set = <K extends keyof AppearanceDraft>(k: K, v: AppearanceDraft[K]) => onChange({ ...draft, [k]: v });
  const colorId = useId();
  const brand = HEX.test(draft.brandColor) ? draft.brandColor.toLowerCase() : DEFAULT_BRAND;
  const on = textOn(brand);
  const err = (k: string) => errors[`/settings/appearance/${k}`];
  return (
    <fieldset disabled={disabled} className="card stack">
      <legend>Appearance</legend>
      <p className="muted small">
        What visitors see on the hosted page and in the embeds. The form’s name stays internal.
      </p>
      <div className="appearance-grid">
        <div className="stack">
          <Input
            label="Heading"
            value={draft.heading}
            onChange={(e) => set('heading', e.target.value)}
            maxLength={200}
            placeholder={preview.type === 'SURVEY' ? 'We would love your feedback' : 'Subscribe to our newsletter'}
            error={err('heading')}
            hint={`${[...draft.heading].length}/200`}
          />
          <Textarea
            label="Introduction"
            value={draft.intro}
            onChange={(e) => set('intro', e.target.value)}
            rows={3}
            maxLength={2000}
            error={err('intro')}
            hint="Plain text; line breaks are kept."
          />
          <div className="grid-2">
            <Input
              label="Button label"
              value={draft.buttonLabel}
              onChange={(e) => set('buttonLabel', e.target.value)}
              maxLength={60}
              placeholder={preview.type === 'SURVEY' ? 'Send' : 'Subscribe'}
              error={err('buttonLabel')}
            />
            <Select
              label="Theme"
              value={draft.theme}
              onChange={(e) => set('theme', e.target.value as Theme)}
              error={err('theme')}
              options={[
                { value: 'light', label: 'Light' },
                { value: 'dark', label: 'Dark' },
                { value: 'auto', label: 'Auto (follows the visitor’s system)' },
              ]}
            />
          </div>
          <div className="field">
            <label htmlFor={colorId}>Brand colour</label>
            <div className="color-row">
              <input
                id={`${colorId}-picker`}
                type="color"
                className="color-swatch"
                value={brand}
                onChange={(e) => set('brandColor', e.target.value)}
                aria-label="Pick the brand colour"
              />
              <input
                id={colorId}
                className="input mono"
                value={draft.brandColor}
                onChange={(e) => set('brandColor', e.target.value)}
                placeholder={DEFAULT_BRAND}
                maxLength={7}
                aria-invalid={err('brandColor') ? true : undefined}
                aria-describedby={`${colorId}-hint${err('brandColor') ? ` ${colorId}-error` : ''}`}
              />
              {draft.brandColor && (
                <Button size="sm" variant="ghost" onClick={() => set('brandColor', '')}>
                  Reset
                </Button>
              )}
            </div>
            <div className="hint" id={`${colorId}-hint`}>
              Buttons, focus rings and selected choices. Text on it: {on === '#ffffff' ? 'white' : 'black'} (contrast{' '}
              {contrastRatio(brand, on).toFixed(1)}:1).
            </div>
            {err('brandColor') && (
              <div className="error" id={`${colorId}-error`}>
                {err('brandColor')}
              </div>
            )}
          </div>
          <Input
            label="Logo URL"
            type="url"
            value={draft.logoUrl}
            onChange={(e) => set('logoUrl', e.target.value)}
            placeholder="https://example.com/logo.png"
            error={err('logoUrl')}
            hint="An https address; shown above the heading."
          />
          <Textarea
            label="Consent text"
            value={draft.consentText}
            onChange={(e) => set('consentText', e.target.value)}
            rows={2}
            maxLength={1000}
            error={err('consentText')}
            hint="Shown beside a checkbox visitors must tick. Its acceptance and this text are kept with each submission."
          />
        </div>
        <div className="stack-sm appearance-preview">
          <span className="cell-main">Live preview</span>
          <FormPreview form={preview} />
          <p className="muted small">Theme “auto” follows your own system setting here.</p>
        </div>
      </div>
    </fieldset>
  );
}
