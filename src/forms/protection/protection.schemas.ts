import { Type, type Static } from 'typebox';
import { StringEnum } from '../../http/schema-helpers.js';

/** The widget's files served from this origin (protection.assets.ts). */
export const WIDGET_FILES = ['widget.js', 'pbkdf2.js', 'altcha.css'] as const;
export type WidgetFile = (typeof WIDGET_FILES)[number];

export const WidgetAssetParams = Type.Object({ name: StringEnum(WIDGET_FILES) });
export type WidgetAssetParams = Static<typeof WidgetAssetParams>;
