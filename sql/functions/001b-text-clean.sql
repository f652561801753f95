-- Secrets found, redacted and refused (brain.scan_secrets and its callers), and
-- text as stored and shown: checked, cleaned and quoted.

-- What a text read in ROT13 or ROT47 must hold for the rules to read it so: a
-- provider's prefix or a word that names a credential (a constant the planner
-- folds once per session; matched case-insensitively).
CREATE OR REPLACE FUNCTION brain._rotated_hints()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT 'gh[pousr]_|github_pat_|glpat-|gl[a-z]+-|xox[a-z]-|xapp-|sk-|sk_live_|rk_live_|akia|asia|a3t|aiza|hf_|npm_|pypi-|sg\.|ya29\.|eyj|hv[sb]\.|dop_v1_|shp[a-z]{2}_|lin_api_|glsa_|dapi|ltai|pscale_|sntry|whsec_|pass(w|wd|word)?[^a-z]|pwd|secret|token|api[_-]?key|private key|bearer|authorization|mysql|sshpass|curl'
$$;

-- A text in ROT13 or ROT47 read back (each is its own inverse); characters it
-- does not move stay where they are, so positions hold.
CREATE OR REPLACE FUNCTION brain._rotated(t text, how text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE how
        WHEN 'rot13' THEN translate(t, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
                                       'NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm')
        WHEN 'rot47' THEN translate(t, '!"#$%&''()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrstuvwxyz{|}~',
                                       'PQRSTUVWXYZ[\]^_`abcdefghijklmnopqrstuvwxyz{|}~!"#$%&''()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNO')
    END
$$;

-- The same hints as the text as sent holds them when its ROT13 reading holds
-- them: each letter rotated (ROT13 leaves every other character, and the set
-- a-z, as they are), so the text is rotated only when it holds one.
CREATE OR REPLACE FUNCTION brain._rot13_hints()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT replace(brain._rotated(brain._rotated_hints(), 'rot13'), 'n-m', 'a-z')
$$;

-- The same hints as the text as sent holds them when its ROT47 reading holds them
-- (matched case-sensitively; brain._rotated_hints is matched case-insensitively
-- on the reading): each character of the hints rotated, a letter as the class of
-- its two cases rotated, a class as the class of its members and their cases
-- rotated, a negated one likewise. So a text is rotated only when it holds one:
-- translate() with ROT47's 94 characters costs more than the whole pattern.
-- (Folded once a session, a constant: tests/test_secrets.py reads texts both ways.)
CREATE OR REPLACE FUNCTION brain._rot47_hints()
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    h constant text := brain._rotated_hints();
    result text := '';
    i integer := 1;  -- (the hints' character read, j and k ahead of it)
    j integer; k integer;
    c text; spec text; members text; negated boolean;
BEGIN
    WHILE i <= length(h) LOOP
        c := substr(h, i, 1);
        IF c IN ('|', '(', ')', '?', '+') THEN
            result := result || c;
            i := i + 1;
            CONTINUE;
        ELSIF c = '{' THEN
            j := i + strpos(substr(h, i), '}') - 1;
            result := result || substr(h, i, j - i + 1);
            i := j + 1;
            CONTINUE;
        ELSIF c = '[' THEN
            j := i + strpos(substr(h, i), ']') - 1;
            spec := substr(h, i + 1, j - i - 1);
            negated := left(spec, 1) = '^';
            spec := CASE WHEN negated THEN substr(spec, 2) ELSE spec END;
            members := '';
            k := 1;
            WHILE k <= length(spec) LOOP
                IF k + 2 <= length(spec) AND substr(spec, k + 1, 1) = '-' THEN
                    members := members || (SELECT string_agg(chr(x), '')
                                           FROM generate_series(ascii(substr(spec, k, 1)), ascii(substr(spec, k + 2, 1))) AS x);
                    k := k + 3;
                ELSE
                    members := members || substr(spec, k, 1);
                    k := k + 1;
                END IF;
            END LOOP;
            i := j + 1;
        ELSIF c = '\' THEN
            members := substr(h, i + 1, 1);
            negated := false;
            i := i + 2;
        ELSE
            members := c;
            negated := false;
            i := i + 1;
        END IF;
        -- (each member in both cases, rotated, written as \uXXXX)
        result := result || '[' || CASE WHEN negated THEN '^' ELSE '' END
                  || (SELECT string_agg(DISTINCT '\u' || lpad(to_hex(ascii(brain._rotated(v, 'rot47'))), 4, '0'), '')
                      FROM unnest(string_to_array(members, NULL)) AS m(x)
                      CROSS JOIN LATERAL (VALUES (lower(m.x)), (upper(m.x))) AS u(v))
                  || ']';
    END LOOP;
    RETURN result;
END
$$;

CREATE OR REPLACE FUNCTION brain.scan_secrets(t text)
RETURNS TABLE (kind text, start_at integer, end_at integer)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p record;
    var record;
    h_rule integer[];
    h_kind text[];
    h_start integer[];
    h_end integer[];
    how text;
    k integer := 0;
    len integer;
    maxw integer;
    maxw85 integer;
    has_digit boolean;
    s integer;
    e integer;
BEGIN
    IF t IS NULL OR t = '' THEN
        RETURN;
    END IF;
    len := length(t);
    p := brain._scan_rules(t);
    h_rule := p.rules; h_kind := p.kinds; h_start := p.starts; h_end := p.ends;
    -- The text read backwards (a reversed token, a reversed `password = ...`).
    p := brain._scan_rules(reverse(t), hinted_only => true);
    FOR i IN 1 .. coalesce(array_length(p.rules, 1), 0) LOOP
        h_rule := h_rule || (p.rules[i] + 1000);
        h_kind := h_kind || p.kinds[i];
        h_start := h_start || (len - p.ends[i] + 2);
        h_end := h_end || (len - p.starts[i] + 2);
    END LOOP;
    -- The text with each way of hiding undone, one way at a time; a hit in
    -- the copy is reported where the stretch it came from stands in the text.
    -- The text in ROT13 and in ROT47 (rules with hints): a character for a character.
    FOREACH how IN ARRAY ARRAY['rot13', 'rot47'] LOOP
        -- (only a text that holds, rotated, a provider's prefix or a credential's word:
        -- one short regular expression, not the rules' hints, over every text)
        CONTINUE WHEN how = 'rot13' AND t !~* brain._rot13_hints();
        CONTINUE WHEN how = 'rot47' AND t !~ brain._rot47_hints();
        p := brain._scan_rules(brain._rotated(t, how), hinted_only => true);
        FOR i IN 1 .. coalesce(array_length(p.rules, 1), 0) LOOP
            -- (a credential found by its punctuation alone, which ROT13 leaves as it is:
            -- user:password@ read rotated is no placeholder any more)
            CONTINUE WHEN p.kinds[i] IN ('url-credentials', 'pgpass-password');
            h_rule := h_rule || (p.rules[i] + CASE how WHEN 'rot13' THEN 1300 ELSE 1400 END);
            h_kind := h_kind || p.kinds[i];
            h_start := h_start || p.starts[i];
            h_end := h_end || p.ends[i];
        END LOOP;
    END LOOP;
    FOREACH how IN ARRAY ARRAY['unicode', 'escapes', 'blobs', 'spacing', 'joins', 'markup', 'groups',
                               'charcodes', 'hexdump', 'base85'] LOOP
        k := k + 1;
        -- (each way is looked for in one pass first: most texts use none; and first
        -- without a pattern where a character it needs is missing, for a write
        -- runs more patterns than a backend keeps compiled)
        CONTINUE WHEN how = 'unicode' AND (octet_length(t) = length(t) OR current_setting('server_encoding') <> 'UTF8'
                                           OR normalize(t, NFKC) = t AND t !~ '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\u0370-\u03ff\u0400-\u052f\u0261\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\U000e0000-\U000e01ef]');
        CONTINUE WHEN how = 'escapes' AND (strpos(t, '&') = 0 AND strpos(t, '%') = 0 AND strpos(t, '\') = 0
                                           OR t !~ '&#|&[A-Za-z]{2,8};|%[0-9A-Fa-f]{2}|\\[xu][0-9A-Fa-f]{2}|\\u\{|\\[0-3][0-7]{2}');
        -- (a blob is a run of 16 or more characters none of which is a space or line break)
        -- (and the longest that holds a character of Ascii85 outside base64's alphabet)
        IF maxw IS NULL AND how IN ('blobs', 'base85') THEN
            SELECT coalesce(max(length(w)), 0),
                   coalesce(max(length(w)) FILTER (WHERE length(translate(w, '!"#$%&''()*,:;<>?@[\]^`', '')) < length(w)), 0)
            INTO maxw, maxw85
            FROM unnest(string_to_array(translate(t, E'\n\r\t\f\x0B', '     '), ' ')) AS w;
        END IF;
        CONTINUE WHEN how = 'blobs' AND maxw < 16;
        -- (a stretch these read decodes only when it holds a digit: brain._secret_decode)
        IF has_digit IS NULL AND how IN ('blobs', 'joins', 'markup', 'groups', 'charcodes') THEN
            has_digit := translate(t, '0123456789', '') <> t;
        END IF;
        CONTINUE WHEN how IN ('blobs', 'joins', 'markup', 'groups', 'charcodes') AND NOT has_digit;
        CONTINUE WHEN how = 'joins' AND strpos(t, E'\n') = 0 AND strpos(t, '"') = 0 AND strpos(t, '''') = 0
                                    AND strpos(t, '`') = 0 AND strpos(t, '+') = 0;
        CONTINUE WHEN how = 'markup' AND strpos(t, '\') = 0 AND strpos(t, '<') = 0 AND strpos(t, '*') = 0
                                     AND strpos(t, '~') = 0 AND strpos(t, '`') = 0 AND strpos(t, '|') = 0;
        -- (chr() and char() calls or a list of codes; a hex dump's lines or a 0x list; a run
        -- of Ascii85's alphabet with a character outside base64's)
        CONTINUE WHEN how = 'charcodes' AND strpos(lower(t), 'chr') = 0 AND strpos(lower(t), 'char') = 0
                                        AND (strpos(t, '[') = 0 OR t !~ '\[[ \t]*[0-9]{2,3}[ \t]*,');
        -- (without a regular expression: a write runs more than a backend keeps compiled)
        CONTINUE WHEN how = 'hexdump' AND strpos(t, '0x') = 0 AND strpos(t, '0X') = 0
                      AND length(translate(t, E'0123456789abcdefABCDEF \t\n:', '')) * 2 > length(t);
        CONTINUE WHEN how = 'base85' AND maxw85 < 20 AND strpos(t, '<~') = 0;
        CONTINUE WHEN how IN ('blobs', 'spacing', 'joins', 'markup', 'groups', 'charcodes', 'hexdump', 'base85')
                      AND t !~ brain._secret_stretch(how);
        var := brain._secret_variant(t, how);
        CONTINUE WHEN var.v IS NULL;
        p := brain._scan_rules(var.v);
        FOR i IN 1 .. coalesce(array_length(p.rules, 1), 0) LOOP
            s := NULL; e := NULL;
            FOR j IN 1 .. array_length(var.os, 1) LOOP
                IF s IS NULL AND p.starts[i] < var.ds[j] + var.dl[j] THEN
                    s := CASE WHEN var.plain[j] THEN var.os[j] + p.starts[i] - var.ds[j] ELSE var.os[j] END;
                END IF;
                IF p.ends[i] - 1 < var.ds[j] + var.dl[j] THEN
                    e := CASE WHEN var.plain[j] THEN var.os[j] + p.ends[i] - var.ds[j] ELSE var.os[j] + var.ol[j] END;
                    EXIT;
                END IF;
            END LOOP;
            CONTINUE WHEN s IS NULL OR e IS NULL OR e <= s;
            h_rule := h_rule || (p.rules[i] + 1000 * (k + 1));
            h_kind := h_kind || p.kinds[i];
            h_start := h_start || s;
            h_end := h_end || e;
        END LOOP;
    END LOOP;
    -- A hit that overlaps a hit of an earlier rule (or of the text as sent) is that hit.
    RETURN QUERY
        SELECT h.k, h.s, h.e - 1
        FROM unnest(h_rule, h_kind, h_start, h_end) AS h(r, k, s, e)
        WHERE NOT EXISTS (SELECT FROM unnest(h_rule, h_start, h_end) AS o(r, s, e)
                          WHERE o.r < h.r AND o.s < h.e AND h.s < o.e)
        ORDER BY h.s;
END
$$;
COMMENT ON FUNCTION brain.scan_secrets IS
    'The secrets in a text: each one''s kind and its position (first and last character, counted from 1). Never the value. The text is read as sent, backwards, and with each way of hiding a token undone (NFKC and look-alike letters, entities and escapes, base64 and hex, spaced-out characters, pieces joined, markdown and HTML marks and table cells, groups of four): a hidden secret is reported where its stretch stands.';

CREATE OR REPLACE FUNCTION brain.find_secrets(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT s.kind ORDER BY s.kind), '{}') FROM brain.scan_secrets(t) AS s
$$;
COMMENT ON FUNCTION brain.find_secrets IS
    'The kinds of secret found in a text (brain.scan_secrets): empty when clean.';

CREATE OR REPLACE FUNCTION brain.redact_secrets(t text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hit record;
BEGIN
    FOR hit IN SELECT * FROM brain.scan_secrets(t) AS s ORDER BY s.start_at DESC LOOP
        t := overlay(t PLACING '[redacted:' || hit.kind || ']' FROM hit.start_at FOR hit.end_at - hit.start_at + 1);
    END LOOP;
    RETURN t;
END
$$;
COMMENT ON FUNCTION brain.redact_secrets IS
    'The text with each secret replaced by [redacted:KIND] (the key of a `key = value` line and the rest of a URL are kept).';

-- The text of a field to scan: a string as it is; an array or an object as its
-- strings one per line (JSON escapes would hide a line break before a token),
-- then as JSON (its keys and numbers).
CREATE OR REPLACE FUNCTION brain._field_text(v jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE jsonb_typeof(v)
        WHEN 'string' THEN v #>> '{}'
        WHEN 'null' THEN NULL
        WHEN 'array' THEN concat_ws(E'\n', (SELECT string_agg(x #>> '{}', E'\n')
                                            FROM jsonb_path_query(v, 'strict $.**') AS x
                                            WHERE jsonb_typeof(x) = 'string'), v::text)
        WHEN 'object' THEN concat_ws(E'\n', (SELECT string_agg(x #>> '{}', E'\n')
                                             FROM jsonb_path_query(v, 'strict $.**') AS x
                                             WHERE jsonb_typeof(x) = 'string'), v::text)
        ELSE v::text END
$$;

-- Refuses fields that hold a secret: BR007 naming the field, the kind and the
-- position, never the value. fields: {"name": text or any JSON}. Every caller
-- runs it before any other check that could repeat a value in a message.
CREATE OR REPLACE FUNCTION brain._refuse_secrets(fields jsonb, outcome text DEFAULT 'nothing was stored')
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hits jsonb;
    first jsonb;
BEGIN
    -- One scan of all the fields together; each field alone only when it found something.
    IF NOT EXISTS (SELECT FROM brain.scan_secrets((
            SELECT string_agg(brain._field_text(f.value), E'\n\u0001\n')
            FROM jsonb_each(fields) AS f WHERE jsonb_typeof(f.value) <> 'null'))) THEN
        RETURN;
    END IF;
    SELECT jsonb_agg(jsonb_build_object('field', f.key, 'kind', s.kind, 'start', s.start_at, 'end', s.end_at)
                     ORDER BY f.ord, s.start_at)
    INTO hits
    FROM jsonb_each(fields) WITH ORDINALITY AS f(key, value, ord)
    CROSS JOIN LATERAL brain.scan_secrets(brain._field_text(f.value)) AS s;
    IF hits IS NULL THEN
        RETURN;
    END IF;
    first := hits->0;
    PERFORM brain._raise('BR007',
        format('The %s holds what looks like a secret (%s at character %s)%s; %s.',
               replace(first->>'field', '_', ' '), first->>'kind', first->>'start',
               CASE WHEN jsonb_array_length(hits) > 1
                    THEN format(' and %s more', jsonb_array_length(hits) - 1) ELSE '' END, outcome),
        jsonb_build_object('secrets', hits,
                           'patterns', (SELECT jsonb_agg(DISTINCT h->>'kind') FROM jsonb_array_elements(hits) AS h)),
        'Remove the secret and refer to where it is kept (a vault path or an environment variable name).');
END
$$;

-- An observed text as stored: secrets redacted, control and bidi characters
-- removed; with what was redacted where (positions in the text as sent) and
-- the injection signals of the text as sent.
CREATE OR REPLACE FUNCTION brain._clean_observed(t text, OUT cleaned text, OUT redacted jsonb, OUT signals text[])
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    hit record;
BEGIN
    cleaned := t;
    signals := brain.injection_signals(t);
    FOR hit IN SELECT * FROM brain.scan_secrets(t) AS s ORDER BY s.start_at DESC LOOP
        cleaned := overlay(cleaned PLACING '[redacted:' || hit.kind || ']'
                           FROM hit.start_at FOR hit.end_at - hit.start_at + 1);
        redacted := jsonb_build_object('kind', hit.kind, 'start', hit.start_at, 'end', hit.end_at)
                    || coalesce(redacted, '[]');
    END LOOP;
    cleaned := brain.clean_body(cleaned);
END
$$;

CREATE OR REPLACE FUNCTION brain.check_text(text text, field text DEFAULT 'text')
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM brain._refuse_secrets(jsonb_build_object(coalesce(field, 'text'), check_text.text),
                                  'it was not used');
    RETURN true;
END
$$;
COMMENT ON FUNCTION brain.check_text IS
    'true when a text holds no secret, else BR007 naming the field, kind and position. Clients call it before they send a text (a search query, a boot task) to an embedding provider.';

-- Headlines are one line of visible text: line breaks and tabs become spaces,
-- control (Cc) and format (Cf) characters go: bidi overrides and isolates,
-- zero-width characters, the invisible tag characters.
CREATE OR REPLACE FUNCTION brain.clean_headline(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT brain.trim_space(regexp_replace(regexp_replace(
        regexp_replace(t, '[\r\n\t\u000b\u000c\u0085\u2028\u2029]+', ' ', 'g'),
        '[\u0000-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001-\U000e007f]',
        '', 'g'), ' {2,}', ' ', 'g'))
$$;
COMMENT ON FUNCTION brain.clean_headline IS
    'A headline as stored: one line (line breaks and tabs folded to spaces), without control or format characters (bidi overrides, zero-width, tag characters).';

-- Bodies keep their lines (\r\n becomes \n) and tabs, and lose the other
-- control characters, the bidi controls and the tag characters.
CREATE OR REPLACE FUNCTION brain.clean_body(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_replace(regexp_replace(t, '\r\n?|[\u0085\u2028\u2029]', E'\n', 'g'),
        '[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\U000e0001-\U000e007f]',
        '', 'g')
$$;
COMMENT ON FUNCTION brain.clean_body IS
    'A body as stored: lines and tabs kept, other control characters, bidi controls and tag characters removed.';

-- Stored text as the boot payload and the CLI show it: a JSON string literal on
-- one line. Quotes, backslashes and line breaks are escaped (to_json), and so
-- is every invisible character (Cc, Cf, line and paragraph separators): the
-- text can neither close its quotes nor start a line of its own.
CREATE OR REPLACE FUNCTION brain.quote_text(t text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    q text := to_json(coalesce(t, ''))::text;
    -- the invisible and format characters JSON leaves as they are
    invisible CONSTANT text := '[\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001-\U000e007f]';
    ch text;
    cp integer;
BEGIN
    -- (most texts hold none of them: no query for them)
    IF q !~ invisible THEN
        RETURN q;
    END IF;
    FOR ch IN
        SELECT DISTINCT m[1]
        FROM regexp_matches(q, '(' || invisible || ')', 'g') AS m
    LOOP
        cp := ascii(ch);
        q := replace(q, ch, CASE WHEN cp < 65536 THEN '\u' || lpad(to_hex(cp), 4, '0')
                                 ELSE '\u' || to_hex(55296 + ((cp - 65536) >> 10))
                                      || '\u' || to_hex(56320 + ((cp - 65536) & 1023)) END);
    END LOOP;
    RETURN q;
END
$$;
COMMENT ON FUNCTION brain.quote_text IS
    'A stored text as a one-line JSON string literal, every quote, line break and invisible character escaped: how the boot payload shows stored text, so that it cannot close its quotes or start a line (a heading, a list item) of the payload.';
