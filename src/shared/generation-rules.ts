/**
 * Checks a generation request against its tool's rules (after filling it from a template set) and
 * says exactly what is wrong: unknown tool, missing or misplaced image fields, fields the tool
 * does not take. Pure: no I/O, shared by the service (400s) and the studio (recipe checks).
 */
import type { GenerationRequest, TemplateSetEntry } from './api';
import { GENERATION_PARAM_FIELDS, VIRTUAL_MODEL_RATIOS } from './api';
import { getTool, isToolId, type ToolSpec } from './tools';

/** A request that breaks a tool rule; the service answers it with 400, the studio shows it. */
export class RuleViolation extends Error {
  override name = 'RuleViolation';
}

/** What a template set keeps of the request it was saved from (its wire entry, less label and cover). */
export type TemplateStyling = Pick<
  TemplateSetEntry,
  'id' | 'toolId' | 'images' | 'pose' | 'shotType' | 'stylePreset' | 'ratio'
>;

export type ValidGeneration = {
  tool: ToolSpec;
  /** Every image field as a list of references (catalog ids or URLs), in request order. */
  images: Record<string, string[]>;
  request: GenerationRequest;
};

/** Request fields win; omitted ones are filled from the template (spec 4.6 rule 2). */
export function applyTemplate(
  request: GenerationRequest,
  template: TemplateStyling,
): GenerationRequest {
  if (request.toolId !== undefined && request.toolId !== template.toolId) {
    throw new RuleViolation(
      `Template set ${template.id} was saved for toolId '${template.toolId}', not '${request.toolId}'`,
    );
  }
  const tool = getTool(template.toolId);
  const images = { ...request.images };
  for (const [key, value] of Object.entries(template.images)) {
    if (images[key] === undefined && tool.imageKeys.includes(key)) images[key] = value;
  }
  const merged: GenerationRequest = { ...request, toolId: template.toolId, images };
  const saved = {
    pose: template.pose,
    shotType: template.shotType,
    stylePreset: template.stylePreset,
    ratio: template.ratio,
  };
  for (const [field, value] of Object.entries(saved) as [keyof typeof saved, string | null][]) {
    if (merged[field] === undefined && value !== null && tool.fields.includes(field)) {
      (merged as Record<string, unknown>)[field] = value;
    }
  }
  return merged;
}

export function validateGeneration(request: GenerationRequest): ValidGeneration {
  if (request.toolId === undefined)
    throw new RuleViolation('toolId is required (or a templateSetId)');
  const toolId = request.toolId;
  if (!isToolId(toolId)) {
    throw new RuleViolation(`Unknown toolId '${toolId}'; GET /v1/models lists the valid ones`);
  }
  const tool = getTool(toolId);

  for (const field of GENERATION_PARAM_FIELDS) {
    if (request[field] !== undefined && !tool.fields.includes(field)) {
      throw new RuleViolation(`${toolId}: field '${field}' does not apply to this tool`);
    }
  }
  for (const field of tool.requiredFields) {
    if (request[field] === undefined)
      throw new RuleViolation(`${toolId}: missing required field '${field}'`);
  }
  if (
    toolId === 'virtual_model' &&
    request.ratio &&
    !(VIRTUAL_MODEL_RATIOS as readonly string[]).includes(request.ratio)
  ) {
    throw new RuleViolation(
      `virtual_model: ratio must be one of ${VIRTUAL_MODEL_RATIOS.join(', ')}`,
    );
  }

  const images: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(request.images ?? {})) {
    if (!tool.imageKeys.includes(key)) {
      throw new RuleViolation(
        `${toolId}: image field '${key}' does not apply to this tool (accepted: ${tool.imageKeys.join(', ')})`,
      );
    }
    const isArrayKey = tool.arrayKeys.includes(key);
    if (Array.isArray(value) && !isArrayKey) {
      throw new RuleViolation(`${toolId}: image field '${key}' takes one URL, not an array`);
    }
    if (!Array.isArray(value) && isArrayKey) {
      throw new RuleViolation(`${toolId}: image field '${key}' takes an array of URLs`);
    }
    images[key] = Array.isArray(value) ? value : [value];
  }
  for (const requirement of tool.required) {
    if (!requirement.oneOf.some((key) => images[key]?.length)) {
      throw new RuleViolation(
        `${toolId}: missing required image '${requirement.oneOf.join("' or '")}'`,
      );
    }
  }
  return { tool, images, request: { ...request, toolId } };
}
