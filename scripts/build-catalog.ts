/**
 * Builds resources/catalog (catalog.json + images) from the definitions below, deterministically:
 * `npm run catalog:build`. The images are vector art rendered with sharp; the local provider
 * composes with them (models are redrawn in any pose from the same appearance data).
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { drawFigure, type Appearance, type PoseJoints } from '../src/core/catalog/figure';
import { venueSvg, type VenueLook } from '../src/core/catalog/venue-art';

const out = path.resolve(import.meta.dirname, '../resources/catalog');

const SKINS = ['#f2d3bd', '#e8b894', '#c98f65', '#a66a43', '#7a4a2c', '#55341f'];
const HAIRS = ['#1e1510', '#3b2417', '#6b4226', '#a0703c', '#d8b56a', '#8c8c8c'];
const OUTFITS = ['#e9e4da', '#2b2b2e', '#c9c2b8', '#5b6770', '#efe9e0', '#3d3a36'];
const FEMALE = [
  'Amara',
  'Lena',
  'Sofia',
  'Mei',
  'Ines',
  'Zara',
  'Nadia',
  'Elif',
  'Hana',
  'Clara',
  'Priya',
  'Olivia',
];
const MALE = [
  'Kofi',
  'Luca',
  'Kenji',
  'Omar',
  'Mateo',
  'Jonas',
  'Ravi',
  'Elias',
  'Tariq',
  'Noah',
  'Diego',
  'Sven',
];
const FEMALE_HAIR: Appearance['hairStyle'][] = ['long', 'bun', 'curly', 'long', 'short'];
const MALE_HAIR: Appearance['hairStyle'][] = ['short', 'buzz', 'curly', 'short'];

const models = [
  ...FEMALE.map((n, i) => ({ n, i, gender: 'female' as const })),
  ...MALE.map((n, i) => ({ n, i, gender: 'male' as const })),
].map(({ n, i, gender }) => {
  const look: Appearance = {
    skin: SKINS[(i * 5 + (gender === 'male' ? 3 : 0)) % SKINS.length]!,
    hair: HAIRS[(i * 7 + 1) % HAIRS.length]!,
    hairStyle: (gender === 'female' ? FEMALE_HAIR : MALE_HAIR)[
      i % (gender === 'female' ? FEMALE_HAIR.length : MALE_HAIR.length)
    ]!,
    outfit: OUTFITS[i % OUTFITS.length]!,
    shoes: i % 2 ? '#1b1b1b' : '#f4f4f4',
    build: gender === 'male' ? 1.08 + (i % 3) * 0.03 : 0.9 + (i % 3) * 0.03,
    height: gender === 'male' ? 1.02 : 0.97,
  };
  return {
    id: `fm_${n.toLowerCase()}`,
    name: n,
    gender,
    file: `models/fm_${n.toLowerCase()}.png`,
    look,
  };
});

const STAND: PoseJoints = {
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
const p = (over: Partial<PoseJoints>): PoseJoints => ({ ...STAND, ...over });
const DEFAULT_POSES: [string, string, PoseJoints][] = [
  ['pose_front', 'Front, relaxed', STAND],
  [
    'pose_walk',
    'Walking',
    p({ leftArm: 14, rightArm: -4, leftLeg: 9, rightLeg: 2, rightKnee: 14 }),
  ],
  [
    'pose_hands_hips',
    'Hands on hips',
    p({ leftArm: 40, leftElbow: -95, rightArm: 40, rightElbow: -95 }),
  ],
  [
    'pose_crossed_arms',
    'Arms crossed',
    p({ leftArm: 25, leftElbow: -120, rightArm: 25, rightElbow: -120 }),
  ],
  [
    'pose_contrapposto',
    'Contrapposto',
    p({ lean: 4, leftLeg: 2, rightLeg: 12, rightKnee: 10, headTilt: -6 }),
  ],
  ['pose_side', 'Side view', p({ facing: 0, leftArm: 4, rightArm: 4 })],
  ['pose_back', 'Back view', p({ facing: -1 })],
  ['pose_three_quarter', 'Three-quarter turn', p({ facing: 0.55, rightArm: 15, leftLeg: 8 })],
  ['pose_hand_pocket', 'Hand in pocket', p({ rightArm: 20, rightElbow: -40 })],
  ['pose_wave', 'Waving', p({ rightArm: 150, rightElbow: 20 })],
  [
    'pose_stride',
    'Long stride',
    p({ leftArm: 20, rightArm: 18, leftLeg: 14, rightLeg: 14, rightKnee: 18, lean: 3 }),
  ],
  ['pose_lean', 'Leaning', p({ lean: -7, headTilt: 8, leftArm: 20 })],
  ['pose_hair_touch', 'Hand to hair', p({ leftArm: 155, leftElbow: 40 })],
  ['pose_arms_up', 'Arms raised', p({ leftArm: 165, rightArm: 165, leftElbow: 5, rightElbow: 5 })],
  ['pose_wide_stance', 'Wide stance', p({ leftLeg: 18, rightLeg: 18, leftArm: 15, rightArm: 15 })],
  ['pose_cross_legs', 'Crossed legs', p({ leftLeg: -8, rightLeg: -10, rightKnee: 4 })],
  [
    'pose_shrug',
    'Shrug',
    p({ leftArm: 35, leftElbow: -70, rightArm: 35, rightElbow: -70, headTilt: 5 }),
  ],
  ['pose_hand_chin', 'Hand to chin', p({ rightArm: 40, rightElbow: -150 })],
  ['pose_look_away', 'Looking away', p({ headTilt: 14, facing: 0.8 })],
  ['pose_step_back', 'Step back', p({ leftLeg: 12, leftKnee: 10, rightLeg: -6, lean: -3 })],
  [
    'pose_jacket_open',
    'Opening jacket',
    p({ leftArm: 30, leftElbow: -60, rightArm: 30, rightElbow: -60 }),
  ],
  [
    'pose_power',
    'Power stance',
    p({ leftLeg: 14, rightLeg: 14, leftArm: 45, leftElbow: -100, rightArm: 45, rightElbow: -100 }),
  ],
  [
    'pose_twirl',
    'Twirl',
    p({ leftArm: 70, rightArm: 70, leftElbow: 10, rightElbow: 10, facing: 0.7 }),
  ],
  ['pose_casual', 'Casual weight shift', p({ lean: 3, rightLeg: 9, rightKnee: 7, leftArm: 12 })],
];
const JEWELRY_POSES: [string, string, 'ring' | 'necklace' | 'earring' | 'bracelet', PoseJoints][] =
  [
    ['pose_ring_hand_front', 'Hand forward', 'ring', p({ rightArm: 60, rightElbow: -60 })],
    ['pose_ring_chin', 'Hand at chin', 'ring', p({ rightArm: 40, rightElbow: -150 })],
    [
      'pose_ring_crossed',
      'Hands crossed',
      'ring',
      p({ leftArm: 25, leftElbow: -120, rightArm: 25, rightElbow: -120 }),
    ],
    ['pose_ring_hair', 'Hand in hair', 'ring', p({ leftArm: 155, leftElbow: 40 })],
    ['pose_necklace_front', 'Collarbone front', 'necklace', STAND],
    ['pose_necklace_tilt', 'Head tilted', 'necklace', p({ headTilt: 12 })],
    ['pose_necklace_touch', 'Touching necklace', 'necklace', p({ rightArm: 35, rightElbow: -135 })],
    ['pose_necklace_three_quarter', 'Three-quarter', 'necklace', p({ facing: 0.6 })],
    ['pose_earring_profile', 'Profile', 'earring', p({ facing: 0.2, headTilt: -4 })],
    ['pose_earring_hair_back', 'Hair tucked back', 'earring', p({ leftArm: 150, leftElbow: 50 })],
    ['pose_earring_tilt', 'Head tilt', 'earring', p({ headTilt: 15 })],
    ['pose_earring_front', 'Front', 'earring', STAND],
    ['pose_bracelet_wrist_up', 'Wrist raised', 'bracelet', p({ rightArm: 70, rightElbow: -80 })],
    ['pose_bracelet_hips', 'Hand on hip', 'bracelet', p({ rightArm: 40, rightElbow: -95 })],
    [
      'pose_bracelet_crossed',
      'Wrists crossed',
      'bracelet',
      p({ leftArm: 30, leftElbow: -110, rightArm: 30, rightElbow: -110 }),
    ],
    ['pose_bracelet_relaxed', 'Arm relaxed', 'bracelet', p({ rightArm: 14 })],
  ];
const poses = [
  ...DEFAULT_POSES.map(([id, name, joints]) => ({
    id,
    name,
    type: 'default' as const,
    file: `poses/${id}.png`,
    joints,
  })),
  ...JEWELRY_POSES.map(([id, name, type, joints]) => ({
    id,
    name,
    type,
    file: `poses/${id}.png`,
    joints,
  })),
];

const VENUES: [string, string, string, VenueLook][] = [
  [
    'venue_white_seamless',
    'White seamless',
    'studio',
    { kind: 'seamless', top: '#ffffff', bottom: '#ececec' },
  ],
  [
    'venue_grey_seamless',
    'Grey seamless',
    'studio',
    { kind: 'seamless', top: '#d9d9d9', bottom: '#a9a9a9' },
  ],
  [
    'venue_sand_seamless',
    'Sand seamless',
    'studio',
    { kind: 'seamless', top: '#efe3cf', bottom: '#d4c2a3' },
  ],
  [
    'venue_blush_seamless',
    'Blush seamless',
    'studio',
    { kind: 'seamless', top: '#f6dcd6', bottom: '#dfb6ad' },
  ],
  [
    'venue_sage_seamless',
    'Sage seamless',
    'studio',
    { kind: 'seamless', top: '#dfe7d8', bottom: '#b3c2a6' },
  ],
  [
    'venue_navy_seamless',
    'Navy seamless',
    'studio',
    { kind: 'seamless', top: '#3a4a6b', bottom: '#1d2740' },
  ],
  [
    'venue_black_seamless',
    'Black seamless',
    'studio',
    { kind: 'seamless', top: '#3a3a3a', bottom: '#111111' },
  ],
  [
    'venue_terracotta',
    'Terracotta backdrop',
    'studio',
    { kind: 'seamless', top: '#d98b65', bottom: '#a85a3a' },
  ],
  [
    'venue_brick_wall',
    'Brick wall',
    'street',
    { kind: 'brick', wall: '#a4553d', mortar: '#d9c9b8', ground: '#7b7b7b' },
  ],
  [
    'venue_white_brick',
    'Painted brick',
    'street',
    { kind: 'brick', wall: '#f1efe9', mortar: '#cfccc4', ground: '#9a9892' },
  ],
  [
    'venue_city_street',
    'City street',
    'street',
    {
      kind: 'city',
      sky: '#b9d3e8',
      buildings: ['#7d8791', '#a7a199', '#5f6a75', '#c2b8a8'],
      ground: '#6d6d6d',
    },
  ],
  [
    'venue_night_city',
    'City at night',
    'street',
    {
      kind: 'city',
      sky: '#1a2238',
      buildings: ['#2c3550', '#3a3f5a', '#252b40', '#434a66'],
      ground: '#2a2a2e',
    },
  ],
  [
    'venue_concrete',
    'Concrete wall',
    'street',
    { kind: 'plaster', wall: '#b8b5ae', ground: '#8e8b85' },
  ],
  [
    'venue_graffiti',
    'Graffiti wall',
    'street',
    {
      kind: 'graffiti',
      wall: '#d6d2c8',
      colors: ['#e4572e', '#29335c', '#f3a712', '#669bbc'],
      ground: '#6b6b6b',
    },
  ],
  [
    'venue_beach',
    'Beach',
    'outdoor',
    { kind: 'landscape', sky: '#a9d6f5', far: '#4aa3c9', ground: '#ecd9a8' },
  ],
  [
    'venue_desert',
    'Desert',
    'outdoor',
    { kind: 'landscape', sky: '#f3d6a4', far: '#d9a066', ground: '#e6c38b' },
  ],
  [
    'venue_meadow',
    'Meadow',
    'outdoor',
    { kind: 'landscape', sky: '#cfe8f7', far: '#7fb069', ground: '#9ccc65' },
  ],
  [
    'venue_garden',
    'Garden',
    'outdoor',
    {
      kind: 'garden',
      sky: '#dcefd8',
      leaves: ['#4f7942', '#6b8e23', '#2e5e3e'],
      ground: '#8a9a5b',
    },
  ],
  [
    'venue_snow',
    'Snowfield',
    'outdoor',
    { kind: 'landscape', sky: '#dfe9f3', far: '#b6c8d9', ground: '#f7f9fb' },
  ],
  [
    'venue_loft',
    'Loft',
    'interior',
    { kind: 'interior', wall: '#e9e2d6', floor: '#a47a52', window: '#cfe3f1' },
  ],
  [
    'venue_gallery',
    'White gallery',
    'interior',
    { kind: 'interior', wall: '#f7f7f5', floor: '#d8d4cc', window: '#eef3f6' },
  ],
  [
    'venue_boutique',
    'Boutique',
    'interior',
    { kind: 'interior', wall: '#efe1d1', floor: '#6e4b3a', window: '#f4e6c9' },
  ],
  [
    'venue_cafe',
    'Café',
    'interior',
    { kind: 'interior', wall: '#d8c3a5', floor: '#5a3e2b', window: '#e8d7b5' },
  ],
  [
    'venue_pool',
    'Poolside',
    'outdoor',
    { kind: 'pool', sky: '#bfe3f7', water: '#39a9cf', deck: '#efe6d6' },
  ],
];
const venues = VENUES.map(([id, name, category, look]) => ({
  id,
  name,
  category,
  file: `venues/${id}.jpg`,
  look,
}));

const readySets = [
  {
    id: 'rts_studio_basics',
    name: 'Studio basics',
    category: 'studio',
    cover: 'ready/rts_studio_basics.jpg',
    active: true,
    shots: [
      {
        id: 'shot_front',
        name: 'Front',
        pose: 'pose_front',
        fashionModel: 'fm_amara',
        venue: 'venue_white_seamless',
        ratio: '4:5',
      },
      {
        id: 'shot_three_quarter',
        name: 'Three-quarter',
        pose: 'pose_three_quarter',
        fashionModel: 'fm_amara',
        venue: 'venue_white_seamless',
        ratio: '4:5',
      },
      {
        id: 'shot_back',
        name: 'Back',
        pose: 'pose_back',
        fashionModel: 'fm_amara',
        venue: 'venue_white_seamless',
        ratio: '4:5',
      },
      {
        id: 'shot_detail',
        name: 'Hands on hips',
        pose: 'pose_hands_hips',
        fashionModel: 'fm_amara',
        venue: 'venue_white_seamless',
        ratio: '1:1',
      },
    ],
  },
  {
    id: 'rts_city_walk',
    name: 'City walk',
    category: 'street',
    cover: 'ready/rts_city_walk.jpg',
    active: true,
    shots: [
      {
        id: 'shot_walk',
        name: 'Walking',
        pose: 'pose_walk',
        fashionModel: 'fm_kofi',
        venue: 'venue_city_street',
        ratio: '9:16',
      },
      {
        id: 'shot_lean',
        name: 'Leaning',
        pose: 'pose_lean',
        fashionModel: 'fm_kofi',
        venue: 'venue_city_street',
        ratio: '4:5',
      },
      {
        id: 'shot_stride',
        name: 'Stride',
        pose: 'pose_stride',
        fashionModel: 'fm_kofi',
        venue: 'venue_city_street',
        ratio: '3:4',
      },
    ],
  },
  {
    id: 'rts_jewelry_close',
    name: 'Jewellery close-ups',
    category: 'jewelry',
    cover: 'ready/rts_jewelry_close.jpg',
    active: true,
    shots: [
      {
        id: 'shot_neck',
        name: 'Necklace',
        pose: 'pose_necklace_front',
        fashionModel: 'fm_mei',
        venue: 'venue_blush_seamless',
        ratio: '4:5',
      },
      {
        id: 'shot_ear',
        name: 'Earring',
        pose: 'pose_earring_profile',
        fashionModel: 'fm_mei',
        venue: 'venue_blush_seamless',
        ratio: '1:1',
      },
      {
        id: 'shot_wrist',
        name: 'Bracelet',
        pose: 'pose_bracelet_wrist_up',
        fashionModel: 'fm_mei',
        venue: 'venue_blush_seamless',
        ratio: '1:1',
      },
    ],
  },
];

const svgDoc = (w: number, h: number, body: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}</svg>`;

async function render(file: string, svg: string, format: 'png' | 'jpg'): Promise<void> {
  const target = path.join(out, file);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const img = sharp(Buffer.from(svg));
  await (
    format === 'png'
      ? img.png({ compressionLevel: 9, palette: true })
      : img.jpeg({ quality: 82, mozjpeg: true })
  ).toFile(target);
}

async function main(): Promise<void> {
  fs.rmSync(out, { recursive: true, force: true });
  for (const m of models) {
    const { svg } = drawFigure(m.look, STAND, 512, 768);
    await render(
      m.file,
      svgDoc(512, 768, `<rect width="100%" height="100%" fill="#f3f1ed"/>${svg}`),
      'png',
    );
  }
  const reference: Appearance = {
    skin: '#c9c4bc',
    hair: '#8a857d',
    hairStyle: 'short',
    outfit: '#a8a39b',
    shoes: '#6f6a63',
    build: 1,
    height: 1,
  };
  for (const pose of poses) {
    const { svg } = drawFigure(reference, pose.joints, 256, 384);
    await render(
      pose.file,
      svgDoc(256, 384, `<rect width="100%" height="100%" fill="#ffffff"/>${svg}`),
      'png',
    );
  }
  for (const v of venues) await render(v.file, venueSvg(v.look, 768, 768), 'jpg');
  for (const set of readySets) {
    const shot = set.shots[0]!;
    const venue = venues.find((v) => v.id === shot.venue)!;
    const model = models.find((m) => m.id === shot.fashionModel)!;
    const pose = poses.find((x) => x.id === shot.pose)!;
    const { svg } = drawFigure(model.look, pose.joints, 480, 600);
    const bg = venueSvg(venue.look, 480, 600).replace(/^<svg[^>]*>|<\/svg>$/g, '');
    await render(set.cover, svgDoc(480, 600, bg + svg), 'jpg');
  }
  const catalog = { fashionModels: models, venues, poses, readySets };
  fs.writeFileSync(path.join(out, 'catalog.json'), `${JSON.stringify(catalog, null, 1)}\n`);
  const bytes = fs
    .readdirSync(out, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + fs.statSync(path.join(e.parentPath, e.name)).size, 0);
  console.log(
    `catalog: ${models.length} models, ${venues.length} venues, ${poses.length} poses, ${readySets.length} ready sets, ${(bytes / 1024).toFixed(0)} KiB`,
  );
}

await main();
