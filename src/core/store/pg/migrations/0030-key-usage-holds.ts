/**
 * Daily counts taken ahead by a process (see `request-allowance.ts`): `key_usage.count` counts
 * every request admitted plus what processes hold for requests still to come; `holds` says, per
 * process, how much of that it may give back and until when (`{"<holder>": {"held": n, "until":
 * timestamptz}}`, on the key's row so every change happens under the one row lock).
 * `key_usage_take` is a process's one round trip for a key and day: give back what its previous
 * hold did not use, forget holds whose process is gone (past `until`: what they held stays
 * counted), then take up to `p_want` while the count stays within the cap (beyond the `p_need`
 * requests waiting, at most half of what is left, so one busy process does not strand the rest
 * of the day near the cap), and say how much other live processes hold: a refusal is final only
 * when nothing is held.
 */
export const version = 30;

export const sql = `
  ALTER TABLE key_usage ADD COLUMN holds jsonb NOT NULL DEFAULT '{}'::jsonb;

  CREATE FUNCTION key_usage_take(
    p_key text, p_day text, p_holder text, p_unused integer,
    p_need integer, p_want integer, p_cap integer, p_hold_ms integer
  ) RETURNS TABLE (granted integer, total integer, others bigint)
  LANGUAGE plpgsql AS $$
  DECLARE
    v_count integer;
    v_holds jsonb;
    v_back integer;
    v_granted integer;
    v_others bigint;
  BEGIN
    -- Counts are not worth a WAL flush each (see request-counts.ts); this transaction only.
    PERFORM set_config('synchronous_commit', 'off', true);
    INSERT INTO key_usage (key_id, day, count) VALUES (p_key, p_day, 0) ON CONFLICT DO NOTHING;
    SELECT k.count, k.holds INTO v_count, v_holds
      FROM key_usage k WHERE k.key_id = p_key AND k.day = p_day FOR UPDATE;
    v_back := least(coalesce((v_holds -> p_holder ->> 'held')::integer, 0), greatest(p_unused, 0));
    v_count := v_count - v_back;
    SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb),
           coalesce(sum((e.value ->> 'held')::bigint), 0)
      INTO v_holds, v_others
      FROM jsonb_each(v_holds) e
      WHERE e.key <> p_holder AND (e.value ->> 'until')::timestamptz >= now();
    v_granted := greatest(0, least(p_want, greatest(p_need, (p_cap - v_count - p_need) / 2 + p_need), p_cap - v_count));
    v_count := v_count + v_granted;
    IF v_granted > p_need THEN
      v_holds := v_holds || jsonb_build_object(p_holder, jsonb_build_object(
        'held', v_granted - p_need, 'until', now() + p_hold_ms * interval '1 millisecond'));
    END IF;
    UPDATE key_usage k SET count = v_count, holds = v_holds WHERE k.key_id = p_key AND k.day = p_day;
    RETURN QUERY SELECT v_granted, v_count, v_others;
  END;
  $$;
`;
