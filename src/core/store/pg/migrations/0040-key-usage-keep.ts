/**
 * `key_usage_take` with `p_keep` (see `request-allowance.ts`): a process whose allowance is still
 * being used takes the next one ahead of time, keeping what is left of the current one held
 * (counted, its expiry moved on with the new part) instead of giving it back first; its requests
 * then never wait for the round trip. What it keeps is at most what it held: a hold that expired
 * meanwhile stays counted as used. The eight-argument version of 0030 stays for processes of the
 * previous build during a rolling upgrade.
 */
export const version = 40;

export const sql = `
  CREATE FUNCTION key_usage_take(
    p_key text, p_day text, p_holder text, p_unused integer, p_keep integer,
    p_need integer, p_want integer, p_cap integer, p_hold_ms integer
  ) RETURNS TABLE (granted integer, total integer, others bigint)
  LANGUAGE plpgsql AS $$
  DECLARE
    v_count integer;
    v_holds jsonb;
    v_held integer;
    v_back integer;
    v_kept integer;
    v_granted integer;
    v_others bigint;
  BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    INSERT INTO key_usage (key_id, day, count) VALUES (p_key, p_day, 0) ON CONFLICT DO NOTHING;
    SELECT k.count, k.holds INTO v_count, v_holds
      FROM key_usage k WHERE k.key_id = p_key AND k.day = p_day FOR UPDATE;
    v_held := coalesce((v_holds -> p_holder ->> 'held')::integer, 0);
    v_back := least(v_held, greatest(p_unused, 0));
    v_kept := least(v_held - v_back, greatest(p_keep, 0));
    v_count := v_count - v_back;
    SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb),
           coalesce(sum((e.value ->> 'held')::bigint), 0)
      INTO v_holds, v_others
      FROM jsonb_each(v_holds) e
      WHERE e.key <> p_holder AND (e.value ->> 'until')::timestamptz >= now();
    v_granted := greatest(0, least(p_want, greatest(p_need, (p_cap - v_count - p_need) / 2 + p_need), p_cap - v_count));
    v_count := v_count + v_granted;
    IF v_kept + greatest(v_granted - p_need, 0) > 0 THEN
      v_holds := v_holds || jsonb_build_object(p_holder, jsonb_build_object(
        'held', v_kept + greatest(v_granted - p_need, 0),
        'until', now() + p_hold_ms * interval '1 millisecond'));
    END IF;
    UPDATE key_usage k SET count = v_count, holds = v_holds WHERE k.key_id = p_key AND k.day = p_day;
    RETURN QUERY SELECT v_granted, v_count, v_others;
  END;
  $$;
`;
