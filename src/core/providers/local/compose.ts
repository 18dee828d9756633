/**
 * The offline preview renderer for the generative tools: it builds a real picture from the
 * inputs (the venue as background at the requested ratio, the chosen model drawn in the chosen
 * pose, the cut-out product placed on the figure) so every flow can be tried without an AI
 * backend. It is a preview, and says so in a small mark.
 */
import type { Metadata, OverlayOptions, Sharp } from 'sharp';
import { sharp } from '../../../infra/sharp';
import { z } from 'zod';
import type { Catalog } from '../../catalog';
import {
  drawFigure,
  type Appearance,
  type FigureAnchors,
  type PoseJoints,
} from '../../catalog/figure';
import type { ProviderJob } from '../types';
import { ProviderError } from '../types';
import { canvasFor, checkAborted, decodeMeta, open, ratioOf } from './image-io';
import { garmentFromPerson } from './garment-from-person';
import { garmentKind, garmentNamedIn, type GarmentKind } from './garment-kind';
import { earringPieces, jewelryKind } from './jewelry-kind';
import { bodyBoxes, personParts } from './person-parts';
import { computeMatte, matteBox, removeBackground } from './remove-background';

/** The detail shot's side: this share of the photo's short side... */
const DETAIL_OF_PHOTO = 0.45;
/** ...but no more than this share of the product's long side, so a small product fills it. */
const DETAIL_OF_PRODUCT = 0.6;

const LONG_SIDE = 1280;
/**
 * Written into every preview's EXIF description next to the visible mark, so an export can tell a
 * preview from a finished photo and refuse it for a marketplace (the studio matches this text).
 */
export const PREVIEW_MARK = 'PREVIEW: Dropshoot offline renderer, not for publication';

const AppearanceSchema = z.object({
  skin: z.string(),
  hair: z.string(),
  hairStyle: z.enum(['short', 'long', 'bun', 'curly', 'buzz']),
  outfit: z.string(),
  shoes: z.string(),
  build: z.number(),
  height: z.number(),
});
const JointsSchema = z.object({
  leftArm: z.number(),
  leftElbow: z.number(),
  rightArm: z.number(),
  rightElbow: z.number(),
  leftLeg: z.number(),
  leftKnee: z.number(),
  rightLeg: z.number(),
  rightKnee: z.number(),
  lean: z.number(),
  headTilt: z.number(),
  facing: z.number(),
});
const STANDING: PoseJoints = {
  leftArm: 8,
  leftElbow: 4,
  rightArm: 8,
  rightElbow: 4,
  leftLeg: 4,
  leftKnee: 0,
  rightLeg: 4,
  rightKnee: 0,
  lean: 0,
  headTilt: 0,
  facing: 1,
};

type Layer = OverlayOptions;
type Box = { x: number; y: number; width: number; height: number };
/** Where a piece of jewelry is worn. */
type BodyPart = 'ears' | 'neck' | 'hands';
const partFor = (type: string | undefined): BodyPart =>
  type === 'earring' ? 'ears' : type === 'ring' || type === 'bracelet' ? 'hands' : 'neck';

export class Compositor {
  constructor(private readonly catalog: Catalog) {}

  private appearance(id: string | null | undefined): Appearance {
    const entry =
      this.catalog.fashionModels.find((m) => m.id === id) ?? this.catalog.fashionModels[0];
    const parsed = AppearanceSchema.safeParse((entry as { look?: unknown } | undefined)?.look);
    return parsed.success
      ? parsed.data
      : {
          skin: '#c98f65',
          hair: '#3b2417',
          hairStyle: 'short',
          outfit: '#e9e4da',
          shoes: '#1b1b1b',
          build: 1,
          height: 1,
        };
  }

  private joints(poseId: string | null | undefined, variant: number): PoseJoints {
    const entry = poseId ? this.catalog.poses.find((p) => p.id === poseId) : undefined;
    const parsed = JointsSchema.safeParse((entry as { joints?: unknown } | undefined)?.joints);
    if (parsed.success) return parsed.data;
    // No pose given: vary the default pose per shot so packs differ.
    const defaults = this.catalog.poses.filter((p) => p.type === 'default');
    const pick = defaults[variant % Math.max(1, defaults.length)];
    const fromPick = JointsSchema.safeParse((pick as { joints?: unknown } | undefined)?.joints);
    return fromPick.success ? fromPick.data : STANDING;
  }

  /** Background layer at the canvas size: the venue, a solid colour, or a studio sweep. */
  private async background(job: ProviderJob, width: number, height: number): Promise<Buffer> {
    if (job.params.backgroundColor) {
      return sharp({
        create: { width, height, channels: 3, background: job.params.backgroundColor },
      })
        .png()
        .toBuffer();
    }
    if (job.venue)
      return open(job.venue.image.path)
        .resize(width, height, { fit: 'cover' })
        .removeAlpha()
        .png()
        .toBuffer();
    const sweep = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#f7f6f3"/><stop offset="1" stop-color="#dedbd5"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/></svg>`;
    return sharp(Buffer.from(sweep)).png().toBuffer();
  }

  /** The model layer and where products go on it. */
  private async figure(
    job: ProviderJob,
    width: number,
    height: number,
    facing?: number,
  ): Promise<{ layer: Layer; anchors: FigureAnchors; missing?: (BodyPart | 'body')[] }> {
    const joints = { ...this.joints(job.pose?.id, job.params.variant ?? 0) };
    if (facing !== undefined) joints.facing = facing;
    if (job.fashionModel && job.fashionModel.id === null) {
      // The caller's own model photo: cut the person out and stand them in the frame.
      const person = await removeBackground(await sharp(job.fashionModel.image.path).toBuffer());
      const scaled = await sharp(person)
        .resize(Math.round(width * 0.8), Math.round(height * 0.92), { fit: 'inside' })
        .png()
        .toBuffer();
      const meta = await sharp(scaled).metadata();
      const x = Math.round((width - meta.width!) / 2);
      const y = height - meta.height! - Math.round(height * 0.02);
      const w = meta.width!;
      const h = meta.height!;
      // Jewelry goes where the person's parts are found in the photo; the fixed fractions below
      // only stand for parts no piece is placed on (a part not found is reported as missing).
      const parts = await personParts(person);
      const k = w / (await sharp(person).metadata()).width!;
      const at = (p: { x: number; y: number }) => ({ x: x + p.x * k, y: y + p.y * k });
      const missing: (BodyPart | 'body')[] = [];
      if (!parts.ears) missing.push('ears');
      if (!parts.neck) missing.push('neck');
      if (parts.hands.length === 0) missing.push('hands');
      const both = <T>(found: T[]) => (found.length === 1 ? [found[0]!, found[0]!] : found);
      const found = {
        neck: parts.neck && at(parts.neck),
        ears: parts.ears?.map(at),
        hands: parts.hands.length ? both(parts.hands.map(at)) : undefined,
        wrists: parts.wrists.length ? both(parts.wrists.map(at)) : undefined,
      };
      // Garments go on the torso and legs measured from the face found (a garment over the face
      // is the grotesque preview this avoids); without a face, garments are shown beside the
      // photo (onModel), and the fractions below stand only for the jewelry fallbacks.
      const body = bodyBoxes(parts);
      if (!body) missing.push('body');
      const box = (b: Box) => ({
        x: x + b.x * k,
        y: y + b.y * k,
        width: b.width * k,
        height: b.height * k,
      });
      return {
        missing,
        layer: { input: scaled, left: x, top: y },
        anchors: {
          torso: body
            ? box(body.torso)
            : { x: x + w * 0.25, y: y + h * 0.17, width: w * 0.5, height: h * 0.33 },
          legs: body
            ? box(body.legs)
            : { x: x + w * 0.28, y: y + h * 0.5, width: w * 0.44, height: h * 0.45 },
          neck: found.neck ?? { x: x + w / 2, y: y + h * 0.16 },
          ears: found.ears ?? [
            { x: x + w * 0.44, y: y + h * 0.08 },
            { x: x + w * 0.56, y: y + h * 0.08 },
          ],
          wrists: found.wrists ?? [
            { x: x + w * 0.2, y: y + h * 0.5 },
            { x: x + w * 0.8, y: y + h * 0.5 },
          ],
          hands: found.hands ?? [
            { x: x + w * 0.2, y: y + h * 0.53 },
            { x: x + w * 0.8, y: y + h * 0.53 },
          ],
          bbox: { x, y, width: w, height: h },
        },
      };
    }
    const look = this.appearance(job.fashionModel?.id);
    const { svg, anchors } = drawFigure(look, joints, width, height);
    const shadow = `<ellipse cx="${width / 2}" cy="${height * 0.968}" rx="${width * 0.16}" ry="${height * 0.012}" fill="#000" opacity="0.22"/>`;
    const layer = await sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${shadow}${svg}</svg>`,
      ),
    )
      .png()
      .toBuffer();
    return { layer: { input: layer, left: 0, top: 0 }, anchors };
  }

  /** A product cut-out scaled into `box` (centred, keeping its shape). */
  private async place(
    cutout: Buffer,
    box: Box,
    opts: { fill?: 'contain' | 'cover'; rotate?: number } = {},
  ): Promise<Layer> {
    const trimmed = await sharp(cutout)
      .trim({ threshold: 1 })
      .png()
      .toBuffer()
      .catch(() => cutout);
    const w = Math.max(4, Math.round(box.width));
    const h = Math.max(4, Math.round(box.height));
    let img = sharp(trimmed).resize(w, h, { fit: opts.fill === 'cover' ? 'cover' : 'inside' });
    if (opts.rotate)
      img = sharp(await img.png().toBuffer()).rotate(opts.rotate, {
        background: { r: 0, g: 0, b: 0, alpha: 0 },
      });
    const input = await img.png().toBuffer();
    const meta = await sharp(input).metadata();
    return {
      input,
      left: Math.round(box.x + (box.width - meta.width!) / 2),
      top: Math.round(box.y + (box.height - meta.height!) / 2),
    };
  }

  private async cutouts(job: ProviderJob, keys: readonly string[]): Promise<Buffer[]> {
    const files = keys.flatMap((k) => job.images[k] ?? []);
    if (files.length === 0) throw new ProviderError(`${job.toolId}: no product image to compose`);
    const out: Buffer[] = [];
    for (const file of files) {
      await decodeMeta(file.path);
      out.push(await removeBackground(await sharp(file.path).rotate().toBuffer()));
    }
    return out;
  }

  /**
   * Dresses the figure by garment kind (read from each cut-out's silhouette): tops on the torso,
   * trousers and skirts on the legs, dresses from the shoulders down. A garment whose place is
   * taken (a second top) is shown beside the figure rather than somewhere it does not go.
   */
  private async dress(
    garments: Buffer[],
    anchors: FigureAnchors,
    canvasWidth: number,
  ): Promise<Layer[]> {
    const t = anchors.torso;
    const l = anchors.legs;
    const boxes: Record<GarmentKind, Box> = {
      top: {
        x: t.x - t.width * 0.12,
        y: t.y - t.height * 0.04,
        width: t.width * 1.24,
        height: t.height * 1.1,
      },
      // From the waist (a little above the hips) to the ankles.
      bottom: {
        x: l.x,
        y: l.y - t.height * 0.12,
        width: l.width,
        height: l.height + t.height * 0.12,
      },
      dress: {
        x: t.x - t.width * 0.1,
        y: t.y,
        width: t.width * 1.2,
        height: t.height + l.height * 0.75,
      },
    };
    const covers: Record<GarmentKind, ('torso' | 'legs')[]> = {
      top: ['torso'],
      bottom: ['legs'],
      dress: ['torso', 'legs'],
    };
    const kinds = await Promise.all(garments.slice(0, 3).map((g) => garmentKind(g)));
    // Drawn bottom-up so a top falls over a waistband.
    const order = kinds.map((kind, i) => ({ kind, i })).sort((a, b) => rank(a.kind) - rank(b.kind));
    const taken = new Set<string>();
    const layers: Layer[] = [];
    const beside: Buffer[] = [];
    for (const { kind, i } of order) {
      if (covers[kind].some((part) => taken.has(part))) {
        beside.push(garments[i]!);
        continue;
      }
      for (const part of covers[kind]) taken.add(part);
      layers.push(
        await this.place(garments[i]!, boxes[kind], {
          fill: kind === 'bottom' ? 'contain' : 'cover',
        }),
      );
    }
    for (const [k, garment] of beside.entries()) {
      const size = t.height * 0.75;
      layers.push(
        await this.place(garment, {
          x: canvasWidth - size * (k + 1) - size * 0.1 * (k + 1),
          y: anchors.bbox.y,
          width: size,
          height: size,
        }),
      );
    }
    return layers;
  }

  /** Jewelry where its type is worn; a pair of earrings one at each ear. */
  private async wear(
    pieces: Buffer[],
    type: string | undefined,
    anchors: FigureAnchors,
  ): Promise<Layer[]> {
    const layers: Layer[] = [];
    for (const [i, piece] of pieces.entries()) {
      const scale = 1 + i * 0.2;
      const parts = type === 'earring' ? await earringPieces(piece) : [piece];
      const ears = parts.length === 2 ? [0, 1] : [1];
      for (const [k, part] of parts.entries())
        layers.push(await this.place(part, this.jewelryBox(type, anchors, scale, ears[k])));
    }
    return layers;
  }

  private jewelryBox(
    type: string | undefined,
    anchors: FigureAnchors,
    scale: number,
    ear = 1,
  ): Box {
    const size = anchors.bbox.height * 0.07 * scale;
    const at = (p: { x: number; y: number } | undefined, k = 1) => ({
      x: (p?.x ?? anchors.neck.x) - (size * k) / 2,
      y: (p?.y ?? anchors.neck.y) - (size * k) / 2,
      width: size * k,
      height: size * k,
    });
    switch (type) {
      case 'ring':
        return at(anchors.hands[1], 0.6);
      case 'earring':
        return at(anchors.ears[ear], 0.5);
      case 'bracelet':
        return at(anchors.wrists[1], 0.8);
      default:
        return {
          x: anchors.neck.x - size * 1.1,
          y: anchors.neck.y - size * 0.1,
          width: size * 2.2,
          height: size * 1.4,
        };
    }
  }

  private async finish(
    base: Buffer,
    layers: Layer[],
    width: number,
    height: number,
    job: ProviderJob,
    crop?: Box,
    note?: string,
  ): Promise<Buffer> {
    let img = sharp(base).composite(layers);
    let buffer = await img.png().toBuffer();
    if (crop) {
      const left = Math.max(0, Math.round(crop.x));
      const top = Math.max(0, Math.round(crop.y));
      const w = Math.min(width - left, Math.round(crop.width));
      const h = Math.min(height - top, Math.round(crop.height));
      buffer = await sharp(buffer)
        .extract({ left, top, width: w, height: h })
        .resize(width, height, { fit: 'cover' })
        .png()
        .toBuffer();
    }
    img = grade(sharp(buffer), job.params.stylePreset);
    const mark = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><text x="${width - 12}" y="${height - 12}" text-anchor="end" font-family="sans-serif" font-size="${Math.round(height / 60)}" fill="#000" fill-opacity="0.35">PREVIEW · offline renderer</text>${note ? noteSvg(note, width, height) : ''}</svg>`,
    );
    return sharp(await img.png().toBuffer())
      .composite([{ input: mark }])
      .withExif({
        IFD0: { ImageDescription: PREVIEW_MARK, Software: 'Dropshoot offline renderer' },
      })
      .jpeg({ quality: 90 })
      .toBuffer();
  }

  private async canvas(
    job: ProviderJob,
    productRatio: number,
  ): Promise<{ width: number; height: number }> {
    return canvasFor(
      ratioOf(job.params.ratio, job.params.ratio === 'auto' ? productRatio : 1),
      LONG_SIDE,
    );
  }

  /** One on-model shot; `crop` frames a part of it (shot types, pack details). */
  async onModel(
    job: ProviderJob,
    productKeys: readonly string[],
    opts: { facing?: number; frame?: 'full' | 'half' | 'close' } = {},
  ): Promise<Buffer> {
    const garments = await this.cutouts(job, productKeys);
    const productMeta = await sharp(garments[0]!).metadata();
    const { width, height } = await this.canvas(job, productMeta.width! / productMeta.height!);
    const figureW = Math.round(Math.min(width, height * 0.75));
    const figureX = Math.round((width - figureW) / 2);
    const [base, figure] = await Promise.all([
      this.background(job, width, height),
      this.figure(job, figureW, height, opts.facing),
    ]);
    const shift = (b: Box): Box => ({ ...b, x: b.x + figureX });
    const anchors: FigureAnchors = {
      ...figure.anchors,
      torso: shift(figure.anchors.torso),
      legs: shift(figure.anchors.legs),
      neck: { x: figure.anchors.neck.x + figureX, y: figure.anchors.neck.y },
      ears: figure.anchors.ears.map((p) => ({ x: p.x + figureX, y: p.y })),
      wrists: figure.anchors.wrists.map((p) => ({ x: p.x + figureX, y: p.y })),
      hands: figure.anchors.hands.map((p) => ({ x: p.x + figureX, y: p.y })),
      bbox: shift(figure.anchors.bbox),
    };
    const figureLayer = { ...figure.layer, left: (figure.layer.left ?? 0) + figureX };
    const isJewelry = job.toolId === 'jewelry_on_model' || job.toolId === 'jewelry_ecom_pack';
    // The pack takes no jewelryType: the piece's shape tells a ring, a pair of earrings or a
    // chain; anything else goes at the neck, and the preview says which and why.
    const given = isJewelry ? jewelryTypeOf(job) : undefined;
    const read = isJewelry && !given ? await jewelryKind(garments[0]!) : null;
    const jewelryType = given ?? read ?? undefined;
    const note =
      isJewelry && !given
        ? read
          ? `Worn as ${read === 'earring' ? 'earrings' : `a ${read}`}: read from the piece's shape (no jewelry type given)`
          : 'Shown at the neck: no jewelry type given, and its shape does not tell'
        : undefined;
    const part = partFor(jewelryType);
    if (isJewelry && figure.missing?.includes(part) && job.fashionModel)
      return this.sideBySide(
        job,
        job.fashionModel.image.path,
        garments[0]!,
        `Preview: ${jewelryType ?? 'jewelry'} on your model`,
        `The ${part} could not be found in your photo (left), so the piece (right) is not placed; an AI provider places it.`,
      );
    if (!isJewelry && figure.missing?.includes('body') && job.fashionModel)
      return this.sideBySide(
        job,
        job.fashionModel.image.path,
        await inARow(garments),
        'Preview: the garment on your model',
        'The body could not be located in your photo (left), so the garment (right) is not put on; an AI provider dresses it.',
      );
    const products = isJewelry
      ? await this.wear(garments, jewelryType, anchors)
      : await this.dress(garments, anchors, width);
    const frame = opts.frame ?? frameOf(job.params.shotType, isJewelry);
    const crop =
      frame === 'full'
        ? undefined
        : frameBox(
            frame,
            anchors,
            width,
            height,
            isJewelry ? this.jewelryBox(jewelryType, anchors, 1) : undefined,
          );
    const inFrame = await Promise.all(products.map((l) => clipToCanvas(l, width, height)));
    return this.finish(base, [figureLayer, ...inFrame], width, height, job, crop, note);
  }

  /**
   * pose_angle_switch and model_swap on a real photo: the renderer cannot honestly repose a
   * person or swap them, so it lays the photo beside the target (the catalog pose or model) under
   * a plain label saying what the AI render will do, instead of drawing over the person.
   */
  async labelledLayout(job: ProviderJob): Promise<Buffer> {
    const photo = job.images.user_photo?.[0];
    if (!photo) throw new ProviderError(`${job.toolId}: missing image 'user_photo'`);
    await decodeMeta(photo.path);
    const target = job.toolId === 'pose_angle_switch' ? job.pose : job.fashionModel;
    const name =
      job.toolId === 'pose_angle_switch'
        ? (this.catalog.poses.find((p) => p.id === job.pose?.id)?.name ??
          job.pose?.id ??
          'the chosen pose')
        : (this.catalog.fashionModels.find((m) => m.id === job.fashionModel?.id)?.name ??
          'the chosen model');
    const label =
      job.toolId === 'pose_angle_switch'
        ? `Preview: pose change to ${name}`
        : `Preview: model swap to ${name}`;
    return this.sideBySide(
      job,
      photo.path,
      target?.image.path ?? null,
      label,
      'Your photo (left) and the target (right). The offline renderer does not change a real person; an AI provider does.',
    );
  }

  /** A real photo beside what the AI render would use (a pose, a model, a piece), under a label. */
  private async sideBySide(
    job: ProviderJob,
    photo: string,
    beside: string | Buffer | null,
    label: string,
    explain: string,
  ): Promise<Buffer> {
    const width = 1280;
    const height = 960;
    const bar = 96;
    const pane = { width: Math.round(width * 0.5) - 24, height: height - bar - 32 };
    const fit = (input: string | Buffer) =>
      (typeof input === 'string' ? open(input) : sharp(input))
        .resize(pane.width, pane.height, { fit: 'contain', background: '#ffffff' })
        .flatten({ background: '#ffffff' })
        .png()
        .toBuffer();
    const layers: Layer[] = [{ input: await fit(photo), left: 16, top: bar + 16 }];
    if (beside)
      layers.push({
        input: await fit(beside),
        left: Math.round(width * 0.5) + 8,
        top: bar + 16,
      });
    const esc = (t: string) => t.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
    const text = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${bar}"><rect width="100%" height="100%" fill="#1f2328"/><text x="24" y="44" font-family="sans-serif" font-size="30" fill="#ffffff">${esc(label)}</text><text x="24" y="78" font-family="sans-serif" font-size="20" fill="#c9d1d9">${esc(explain)}</text></svg>`;
    layers.push({ input: Buffer.from(text), left: 0, top: 0 });
    const base = await sharp({ create: { width, height, channels: 3, background: '#f2f2f0' } })
      .png()
      .toBuffer();
    return this.finish(base, layers, width, height, {
      ...job,
      params: { ...job.params, stylePreset: undefined },
    });
  }

  /** The product laid flat on a textured surface with a soft shadow. */
  async flatLay(
    job: ProviderJob,
    productKeys: readonly string[],
    surface = '#eae6df',
    fromPerson = false,
  ): Promise<Buffer> {
    // model_to_flat_lay: the garment alone, not the person wearing it; the one the request names.
    const named = fromPerson ? garmentNamedIn(job.params.customPrompt ?? '') : null;
    if (named && 'several' in named)
      throw new ProviderError(
        `model_to_flat_lay: the request names more than one garment (${named.several.join(', ')}); a flat lay shows one, so name the one to lay out`,
      );
    const [cut] = await this.cutouts(job, productKeys);
    const product = fromPerson ? await garmentFromPerson(cut!, named ?? undefined) : cut;
    const { width, height } = canvasFor(ratioOf(job.params.ratio, 1), LONG_SIDE);
    const grain = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><filter id="n"><feTurbulence type="fractalNoise" baseFrequency="0.9" numOctaves="2" seed="${(job.params.variant ?? 0) + 3}"/><feColorMatrix values="0 0 0 0 0  0 0 0 0 0  0 0 0 0 0  0 0 0 0.08 0"/></filter><rect width="100%" height="100%" fill="${surface}"/><rect width="100%" height="100%" filter="url(#n)"/></svg>`;
    const base = await sharp(Buffer.from(grain)).png().toBuffer();
    const placed = await this.place(
      product!,
      { x: width * 0.15, y: height * 0.12, width: width * 0.7, height: height * 0.76 },
      { rotate: ((job.params.variant ?? 0) % 3) * 4 - 4 },
    );
    const shadowSrc = await sharp(placed.input as Buffer)
      .ensureAlpha()
      .extractChannel(3)
      .toBuffer();
    const meta = await sharp(placed.input as Buffer).metadata();
    const shadow = await sharp({
      create: { width: meta.width!, height: meta.height!, channels: 3, background: '#000' },
    })
      .joinChannel(await sharp(shadowSrc).linear(0.3, 0).blur(12).toBuffer())
      .png()
      .toBuffer();
    return this.finish(
      base,
      [{ input: shadow, left: (placed.left ?? 0) + 10, top: (placed.top ?? 0) + 14 }, placed],
      width,
      height,
      job,
    );
  }

  /** The cut-out product centred on pure white (pack "on white" shot). */
  async onWhite(job: ProviderJob, productKeys: readonly string[]): Promise<Buffer> {
    const [product] = await this.cutouts(job, productKeys);
    const { width, height } = canvasFor(1, LONG_SIDE);
    const base = await sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
      .png()
      .toBuffer();
    const placed = await this.place(product!, {
      x: width * 0.08,
      y: height * 0.08,
      width: width * 0.84,
      height: height * 0.84,
    });
    return this.finish(base, [placed], width, height, {
      ...job,
      params: { ...job.params, stylePreset: undefined },
    });
  }

  /** A close crop of the product itself (pack "detail" shot). */
  async detail(job: ProviderJob, productKeys: readonly string[]): Promise<Buffer> {
    const file = productKeys.flatMap((k) => job.images[k] ?? [])[0];
    if (!file) throw new ProviderError(`${job.toolId}: no product image`);
    const meta = await decodeMeta(file.path);
    const [photoW, photoH] = [meta.width!, meta.height!];
    // A close-up of the product, wherever it lies: the photo's centre showed mostly backdrop, or a
    // garment's edge, when the product was small in the frame or off to one side.
    let side = Math.round(Math.min(photoW, photoH) * DETAIL_OF_PHOTO);
    let [cx, cy] = [photoW / 2, photoH / 2];
    const matte = await computeMatte(file.path);
    const box = matteBox(matte);
    if (box) {
      const [sx, sy] = [photoW / matte.width, photoH / matte.height];
      side = Math.min(
        side,
        Math.round(DETAIL_OF_PRODUCT * Math.max(box.width * sx, box.height * sy)),
      );
      [cx, cy] = [(box.left + box.width / 2) * sx, (box.top + box.height / 2) * sy];
    }
    side = Math.max(16, side);
    const left = Math.round(Math.min(photoW - side, Math.max(0, cx - side / 2)));
    const top = Math.round(Math.min(photoH - side, Math.max(0, cy - side / 2)));
    const { width, height } = canvasFor(1, LONG_SIDE);
    const base = await open(file.path)
      .extract({ left, top, width: side, height: side })
      .resize(width, height, { kernel: 'lanczos3' })
      .sharpen()
      .png()
      .toBuffer();
    return this.finish(base, [], width, height, job);
  }
}

/** A plain label across the top: what the preview did in place of what it was not told. */
/**
 * The part of a layer inside the canvas: trousers on a photo cut at the thighs run past its bottom
 * edge, and sharp refuses an overlay that does not fit.
 */
async function clipToCanvas(layer: Layer, width: number, height: number): Promise<Layer> {
  if (!Buffer.isBuffer(layer.input)) return layer;
  const meta = await sharp(layer.input).metadata();
  const left = layer.left ?? 0;
  const top = layer.top ?? 0;
  const x0 = Math.max(0, left);
  const y0 = Math.max(0, top);
  const x1 = Math.min(width, left + meta.width!);
  const y1 = Math.min(height, top + meta.height!);
  if (x0 === left && y0 === top && x1 === left + meta.width! && y1 === top + meta.height!)
    return layer;
  if (x1 <= x0 || y1 <= y0) return { input: TRANSPARENT_PIXEL, left: 0, top: 0 };
  const input = await sharp(layer.input)
    .extract({ left: x0 - left, top: y0 - top, width: x1 - x0, height: y1 - y0 })
    .png()
    .toBuffer();
  return { input, left: x0, top: y0 };
}
const TRANSPARENT_PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** Cut-outs side by side on a transparent strip, each trimmed to its content. */
async function inARow(cutouts: Buffer[]): Promise<Buffer> {
  if (cutouts.length === 1) return cutouts[0]!;
  const trimmed = await Promise.all(
    cutouts.map((c) =>
      sharp(c)
        .trim({ threshold: 1 })
        .resize({ height: 600, fit: 'inside' })
        .png()
        .toBuffer({ resolveWithObject: true })
        .catch(() => sharp(c).resize({ height: 600 }).png().toBuffer({ resolveWithObject: true })),
    ),
  );
  const gap = 40;
  const width = trimmed.reduce((sum, t) => sum + t.info.width + gap, -gap);
  const height = Math.max(...trimmed.map((t) => t.info.height));
  let left = 0;
  const layers: Layer[] = trimmed.map((t) => {
    const layer = { input: t.data, left, top: Math.round((height - t.info.height) / 2) };
    left += t.info.width + gap;
    return layer;
  });
  return sharp({
    create: { width, height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
  })
    .composite(layers)
    .png()
    .toBuffer();
}

function noteSvg(note: string, width: number, height: number): string {
  const size = Math.max(12, Math.round(Math.min(height / 45, (width * 1.7) / note.length)));
  const esc = note.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<rect width="100%" height="${Math.round(size * 1.8)}" fill="#ffffff" fill-opacity="0.8"/><text x="12" y="${Math.round(size * 1.3)}" font-family="sans-serif" font-size="${size}" fill="#1f2328">${esc}</text>`;
}

/** The piece's type: the request's jewelryType, else the type of the jewelry pose chosen. */
function jewelryTypeOf(job: ProviderJob): string | undefined {
  return (
    job.params.jewelryType ?? (job.pose && job.pose.type !== 'default' ? job.pose.type : undefined)
  );
}

const rank = (kind: GarmentKind): number => (kind === 'bottom' ? 0 : kind === 'dress' ? 1 : 2);

function frameOf(shotType: string | undefined, jewelry: boolean): 'full' | 'half' | 'close' {
  if (jewelry) return 'close';
  if (shotType === 'half_body') return 'half';
  if (shotType === 'close_up') return 'close';
  return 'full';
}

function frameBox(
  frame: 'half' | 'close',
  anchors: FigureAnchors,
  width: number,
  height: number,
  focus?: Box,
): Box {
  const aspect = width / height;
  const target = focus ?? anchors.torso;
  const h =
    frame === 'half'
      ? anchors.bbox.height * 0.55
      : Math.max(target.height * (focus ? 4 : 1.6), height * 0.22);
  const w = h * aspect;
  const cx = target.x + target.width / 2;
  const cy =
    frame === 'half'
      ? anchors.bbox.y + h / 2 - anchors.bbox.height * 0.02
      : target.y + target.height / 2;
  return {
    x: Math.min(width - w, Math.max(0, cx - w / 2)),
    y: Math.min(height - h, Math.max(0, cy - h / 2)),
    width: Math.min(w, width),
    height: Math.min(h, height),
  };
}

/** Colour grading per style preset. */
function grade(img: Sharp, preset: string | undefined): Sharp {
  switch (preset) {
    case 'editorial':
      return img.modulate({ saturation: 0.8 }).linear(1.15, -18);
    case 'streetwear':
      return img.modulate({ saturation: 1.15 }).tint({ r: 255, g: 240, b: 225 }).linear(1.1, -10);
    case 'luxury':
      return img.modulate({ brightness: 0.92, saturation: 0.9 }).linear(1.12, -12);
    case 'minimal':
      return img.modulate({ brightness: 1.05, saturation: 0.9 });
    default:
      return img;
  }
}
