/**
 * A marker that moves whenever a key row changes (revoked, say), committed with that change, so
 * key caches in every process drop their entries once it is visible (KeyRepository.changeMarker).
 * A trigger rather than the repository bumps it, so any writer of api_keys is covered.
 */
export const version = 20;

export const sql = `
  CREATE TABLE key_changes (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    marker bigint NOT NULL
  );
  INSERT INTO key_changes (marker) VALUES (0);
  CREATE FUNCTION key_changes_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN UPDATE key_changes SET marker = marker + 1; RETURN NULL; END;
  $$;
  CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION key_changes_bump();
`;
