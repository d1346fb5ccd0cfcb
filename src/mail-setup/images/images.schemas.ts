import { Type, type Static } from 'typebox';
import { Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';

/** An image uploaded for emails (contract §16; docs/images.md). */
export const ImageSchema = Type.Object({
  id: Type.String(),
  url: Type.String({ description: 'public, under PUBLIC_URL: /i/{id}.{ext}' }),
  contentType: StringEnum(['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const),
  width: Type.Integer({ description: 'px, as stored (after resizing)' }),
  height: Type.Integer({ description: 'px, as stored; one frame of an animation' }),
  bytes: Type.Integer({ description: 'size of the stored file' }),
  name: Nullable(Type.String({ description: "the uploaded file's name, sanitised" })),
  createdAt: Timestamp,
});
export type Image = Static<typeof ImageSchema>;

/** The upload: multipart/form-data with the image in the field `file` (read as a stream by the route, not validated here). */
export const UploadImageBody = Type.Object({
  file: Type.String({
    format: 'binary',
    description: 'PNG, JPEG, GIF or WebP, at most 5 MiB; the type is read from the bytes',
  }),
});

export const ImageParams = Type.Object({ imageId: PathId });

/** `/i/{file}`: the image's id, with or without its extension. */
export const PublicImageParams = Type.Object({ file: Type.String({ minLength: 1, maxLength: 64 }) });
