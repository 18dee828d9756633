/**
 * A sheet of every generative tool's offline preview on real photos (issue 11 item 4): three
 * garments of ../shared/eval/garments (or DROPSHOOT_EVAL_DIR) and two people photos, each row one
 * input, each tile one tool's result at small size. Written to docs/quality/preview-tools.jpg.
 * The eval set has no jewelry photos: the jewelry row wears pieces drawn here (a ring, a pair of
 * earrings, a chain, a single drop), on the catalog model and on two of the people photos.
 *
 *   npx tsx scripts/preview-sheet.ts
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import type { OverlayOptions } from 'sharp';
import { sharp } from '../src/infra/sharp';
import { loadCatalog } from '../src/core/catalog';
import { createLocalProvider } from '../src/core/providers/local';
import type { InputImage, ProviderJob } from '../src/core/providers/types';
import type { ToolId } from '../src/shared/api';

const repo = path.resolve(import.meta.dirname, '..');
const evalDir = process.env.DROPSHOOT_EVAL_DIR ?? path.resolve(repo, '../shared/eval');
const out = path.join(repo, 'docs/quality/preview-tools.jpg');
const TILE = 200;
const LABEL = 22;
const GAP = 4;

const catalog = loadCatalog();
const provider = createLocalProvider({ catalog });
const model = catalog.fashionModels[0]!;
const pose = catalog.poses.find((p) => p.type === 'default')!;
const img = (file: string): InputImage => ({
  path: file,
  mime: file.endsWith('.png') ? 'image/png' : 'image/jpeg',
});
const garment = (id: string) => img(path.join(evalDir, 'garments', `${id}.jpg`));
const person = (file: string) => img(path.join(evalDir, 'people', file));

type Cell = {
  label: string;
  toolId: ToolId;
  images: Record<string, InputImage[]>;
  params?: ProviderJob['params'];
  noModel?: boolean;
  /** The caller's own model photo instead of a catalog model. */
  ownModel?: InputImage;
};

function garmentCells(id: string, partner: string): Cell[] {
  const g = garment(id);
  return [
    { label: 'virtual_model', toolId: 'virtual_model', images: { garment_photo: [g] } },
    {
      label: `outfit_photo (+${partner})`,
      toolId: 'outfit_photo',
      images: { garment_photos: [g, garment(partner)] },
    },
    {
      label: 'pro_studio back',
      toolId: 'pro_studio',
      images: { garment_photos: [g] },
      params: { shotType: 'back_view' },
    },
    { label: 'ecom pack 2/4', toolId: 'clothing_ecom_pack', images: { user_photo: [g] } },
    { label: 'amateur_to_pro', toolId: 'amateur_to_pro', images: { user_photo: [g] } },
    {
      label: 'photo_edit light grey',
      toolId: 'photo_edit',
      images: { user_photo: [g] },
      params: { customPrompt: 'make the background light grey' },
    },
    {
      label: 'ai_videos pan (mid)',
      toolId: 'ai_videos',
      images: { user_photo: [g] },
      params: { motionPrompt: 'slow pan left', ratio: '9:16', duration: 1 },
    },
  ];
}

function personCells(file: string): Cell[] {
  const p = person(file);
  return [
    {
      label: 'model_to_flat_lay',
      toolId: 'model_to_flat_lay',
      images: { user_photo: [p] },
      noModel: true,
    },
    {
      label: 'flat_lay "the trousers"',
      toolId: 'model_to_flat_lay',
      images: { user_photo: [p] },
      params: { customPrompt: 'a flat lay of the trousers' },
      noModel: true,
    },
    { label: 'pose_angle_switch', toolId: 'pose_angle_switch', images: { user_photo: [p] } },
    { label: 'model_swap', toolId: 'model_swap', images: { user_photo: [p] } },
    {
      label: 'photo_edit light grey',
      toolId: 'photo_edit',
      images: { user_photo: [p] },
      params: { customPrompt: 'make the background light grey' },
    },
    {
      label: 'ai_videos zoom (end)',
      toolId: 'ai_videos',
      images: { user_photo: [p] },
      params: { motionPrompt: 'zoom in', ratio: '4:5', duration: 1 },
    },
  ];
}

const GOLD = '#c9a23a';
const JEWELRY: Record<string, string> = {
  ring: `<circle cx="300" cy="310" r="130" fill="none" stroke="${GOLD}" stroke-width="44"/><circle cx="300" cy="160" r="34" fill="#3050e0"/>`,
  earrings: [170, 430]
    .map(
      (x) =>
        `<circle cx="${x}" cy="170" r="18" fill="none" stroke="${GOLD}" stroke-width="7"/><path d="M${x} 188 C ${x - 60} 300, ${x - 50} 420, ${x} 440 C ${x + 50} 420, ${x + 60} 300, ${x} 188 Z" fill="${GOLD}"/>`,
    )
    .join(''),
  necklace: `<path d="M90 90 C 110 420, 490 420, 510 90" fill="none" stroke="${GOLD}" stroke-width="6"/><circle cx="300" cy="372" r="22" fill="#3050e0"/>`,
  drop: `<path d="M300 120 C 220 300, 230 430, 300 470 C 370 430, 380 300, 300 120 Z" fill="${GOLD}"/><circle cx="300" cy="105" r="16" fill="none" stroke="${GOLD}" stroke-width="7"/>`,
};

/** The drawn pieces as PNG files in `dir`, and the row's cells: the pack with no jewelryType. */
async function jewelryCells(dir: string): Promise<Cell[]> {
  const cells: Cell[] = [];
  for (const [name, body] of Object.entries(JEWELRY)) {
    const file = path.join(dir, `${name}.png`);
    await sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="560"><rect width="100%" height="100%" fill="#f7f7f5"/>${body}</svg>`,
      ),
    )
      .png()
      .toFile(file);
    cells.push({
      label: `jewelry pack: ${name}`,
      toolId: 'jewelry_ecom_pack',
      images: { user_photo: [img(file)] },
    });
  }
  cells.push({
    label: 'jewelry_on_model: drop, earring',
    toolId: 'jewelry_on_model',
    images: { jewelry_image: [img(path.join(dir, 'drop.png'))] },
    params: { jewelryType: 'earring' },
  });
  // On a real person's photo: placed on the ears and hand found in it.
  for (const [type, piece, who] of [
    ['earring', 'earrings', '07966_00.jpg'],
    ['ring', 'ring', '049205_0.jpg'],
  ] as const)
    cells.push({
      label: `on ${who.replace(/\..*/, '')}: ${type}`,
      toolId: 'jewelry_on_model',
      images: { jewelry_image: [img(path.join(dir, `${piece}.png`))] },
      params: { jewelryType: type },
      ownModel: person(who),
    });
  return cells;
}

/** One frame of a clip, as PNG. */
function frameOf(clip: Buffer, at: number): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-sheet-'));
  try {
    fs.writeFileSync(path.join(dir, 'c.mp4'), clip);
    const r = spawnSync(ffmpeg.path, [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-ss',
      String(at),
      '-i',
      path.join(dir, 'c.mp4'),
      '-frames:v',
      '1',
      path.join(dir, 'f.png'),
    ]);
    if (r.status !== 0) throw new Error(`ffmpeg: ${r.stderr.toString()}`);
    return fs.readFileSync(path.join(dir, 'f.png'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function render(cell: Cell): Promise<Buffer> {
  const job: ProviderJob = {
    jobId: 'sheet',
    toolId: cell.toolId,
    images: cell.images,
    fashionModel: cell.ownModel
      ? { id: null, image: cell.ownModel }
      : cell.noModel
        ? null
        : { id: model.id, image: img(catalog.filePath(model.file)) },
    venue: null,
    pose: { id: pose.id, type: 'default', image: img(catalog.filePath(pose.file)) },
    params: cell.params ?? {},
    outputs: cell.toolId === 'clothing_ecom_pack' ? 2 : 1,
  };
  const outputs = await provider.run(job, { signal: new AbortController().signal });
  const result = outputs[outputs.length - 1]!;
  return result.mime === 'video/mp4'
    ? frameOf(result.data, cell.label.includes('end') ? 0.9 : 0.5)
    : result.data;
}

async function tile(image: Buffer, label: string): Promise<Buffer> {
  const pic = await sharp(image)
    .resize(TILE, TILE, { fit: 'contain', background: '#ffffff' })
    .flatten({ background: '#ffffff' })
    .png()
    .toBuffer();
  const text = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${TILE}" height="${LABEL}"><rect width="100%" height="100%" fill="#24292f"/><text x="6" y="15" font-family="sans-serif" font-size="12" fill="#fff">${label.replace(/[&<>]/g, '')}</text></svg>`,
  );
  return sharp({
    create: { width: TILE, height: TILE + LABEL, channels: 3, background: '#ffffff' },
  })
    .composite([
      { input: text, left: 0, top: 0 },
      { input: pic, left: 0, top: LABEL },
    ])
    .png()
    .toBuffer();
}

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(evalDir, 'garments')))
    throw new Error(`no eval photos at ${evalDir}`);
  const drawn = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-sheet-jewelry-'));
  const rows: { source: InputImage; cells: Cell[] }[] = [
    { source: garment('00055_00'), cells: garmentCells('00055_00', '051991_1') },
    { source: garment('051991_1'), cells: garmentCells('051991_1', '00126_00') },
    { source: garment('12562_00'), cells: garmentCells('12562_00', '00055_00') },
    { source: person('049205_0.jpg'), cells: personCells('049205_0.jpg') },
    { source: person('07966_00.jpg'), cells: personCells('07966_00.jpg') },
    { source: img('drawn jewelry'), cells: await jewelryCells(drawn) },
  ];
  const columns = 1 + Math.max(...rows.map((r) => r.cells.length));
  const width = columns * (TILE + GAP) + GAP;
  const height = rows.length * (TILE + LABEL + GAP) + GAP;
  const layers: OverlayOptions[] = [];
  for (const [r, row] of rows.entries()) {
    const top = GAP + r * (TILE + LABEL + GAP);
    // The input is named, not shown: the eval photos themselves are never copied into the repo.
    const name = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${TILE}" height="${TILE + LABEL}"><rect width="100%" height="100%" fill="#f6f8fa"/><text x="10" y="40" font-family="sans-serif" font-size="14" fill="#24292f">input:</text><text x="10" y="62" font-family="sans-serif" font-size="14" fill="#24292f">${path.basename(row.source.path)}</text></svg>`,
    );
    layers.push({ input: name, left: GAP, top });
    for (const [c, cell] of row.cells.entries()) {
      console.log(`${path.basename(row.source.path)}: ${cell.label}`);
      layers.push({
        input: await tile(await render(cell), cell.label),
        left: GAP + (c + 1) * (TILE + GAP),
        top,
      });
    }
  }
  fs.rmSync(drawn, { recursive: true, force: true });
  await sharp({ create: { width, height, channels: 3, background: '#d0d7de' } })
    .composite(layers)
    .jpeg({ quality: 82 })
    .toFile(out);
  console.log(`wrote ${path.relative(repo, out)} (${width}x${height})`);
}

await main();
