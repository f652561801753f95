-- Signals and metadata of a text: flags, injection signals, the GUARDRAIL-stacking
-- check, tags, people, topics and action items, and ages as text.

-- A memory waiting for a person: flagged at write time and not yet confirmed.
CREATE OR REPLACE FUNCTION brain._is_flagged(flag_reasons text[], flag_confirmed_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT cardinality(flag_reasons) > 0 AND flag_confirmed_at IS NULL
$$;

-- The injection signals of what a text encodes: each base64 run of 20
-- characters or more that decodes to text (at most 8 runs), and the text read
-- in ROT13; an override, a role line, a tool call or a download run by a shell
-- in either is an encoded instruction. (PL/pgSQL: brain.injection_signals,
-- which it calls on each decoded text, is defined after it.)
CREATE OR REPLACE FUNCTION brain._encoded_signals(t text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    run text;
    d text;
    found text[] := '{}';
    n integer := 0;
BEGIN
    FOR run IN SELECT m[1] FROM regexp_matches(t, '([A-Za-z0-9+/_-]{20,}={0,2})', 'g') AS m LOOP
        n := n + 1;
        EXIT WHEN n > 8;
        BEGIN
            d := rtrim(translate(run, '-_', '+/'), '=');
            d := CASE length(d) % 4 WHEN 1 THEN left(d, -1) WHEN 2 THEN d || '==' WHEN 3 THEN d || '=' ELSE d END;
            d := convert_from(decode(d, 'base64'), 'UTF8');
        EXCEPTION WHEN OTHERS THEN
            CONTINUE;
        END;
        CONTINUE WHEN d ~ '[\u0001-\u0008\u000e-\u001f\u007f]' OR d !~ '[A-Za-z]{3}';
        found := found || brain.injection_signals(d);
    END LOOP;
    IF lower(t) ~ '\m(?:gur|nyy|lbhe|naq|cerivbhf|rneyvre|cevbe|nobir|vafgehpgvbaf?|ehyrf|flfgrz|vtaber|qvfertneq|sbetrg)\M' THEN
        found := found || brain.injection_signals(brain._rotated(t, 'rot13'));
    END IF;
    RETURN ARRAY(SELECT DISTINCT f FROM unnest(found) AS f
                 WHERE f IN ('override-phrase', 'role-marker', 'tool-call', 'shell-pipe') ORDER BY f);
END
$$;

-- Signs that a text speaks to the agent instead of recording something:
-- each reason found. Deterministic: patterns only (docs/security.md), written
-- per class of injection: an override aimed at the model (English verbs and
-- their synonyms, and the same order in the ten most spoken languages and a
-- few more), role lines, tool calls in the formats of the major harnesses and
-- models, downloads run by a shell, and instructions encoded (base64, ROT13:
-- brain._encoded_signals). The patterns read the text folded: NFKC
-- (full-width and other compatibility forms become ASCII; skipped for a text
-- already in NFKC), the common Cyrillic and Greek look-alikes of Latin letters
-- become those letters when one touches a Latin letter (a word that mixes
-- scripts; a translate over the whole text costs more than all the patterns),
-- combining marks and zero-width characters inside words go (only in a text
-- that holds one), and an override is also read with leetspeak digits as
-- letters (only in a text with a digit between letters). Every line break (\n,
-- \r, \v, \f, U+0085, U+2028, U+2029) starts a line. Hidden characters are
-- looked for in the text as sent. One regular expression per reason and
-- class: a backend caches 32 compiled ones, and every write runs these.
CREATE OR REPLACE FUNCTION brain.injection_signals(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT x.reason ORDER BY x.reason), '{}')
    FROM (SELECT CASE WHEN pg_catalog.octet_length(f1) <> pg_catalog.length(f1)
                           AND f1 ~ '[a-zA-Z][аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ]|[аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ][a-zA-Z]'
                      THEN pg_catalog.translate(f1, 'аеорсухіјѕԁһӏԛԝѵАВЕКМНОРСТХЅІЈҮԚԜαορνικυχγΑΒΕΖΗΙΚΜΝΟΡΤΥΧ',
                                                    'aeopcyxijsdhlqwvABEKMHOPCTXSIJYQWaopvikuxyABEZHIKMNOPTYX')
                      ELSE f1 END AS f
          FROM (SELECT CASE WHEN pg_catalog.octet_length(t) <> pg_catalog.length(t)
                                 AND t ~ '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u200b-\u200d\u2060\u00ad]'
                            THEN regexp_replace(normalize(f0, NFD),
                                                '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u200b-\u200d\u2060\u00ad]', '', 'g')
                            ELSE f0 END AS f1
                FROM (SELECT CASE WHEN pg_catalog.octet_length(t) = pg_catalog.length(t) OR t IS NFKC NORMALIZED THEN t
                                  ELSE normalize(t, NFKC) END AS f0
                      OFFSET 0) AS n0
                OFFSET 0) AS n1
          OFFSET 0) AS n  -- folded once, not once per reason
    -- (lowercased for the words each pattern needs, looked for first: İ as I, as the patterns fold it;
    -- and with leetspeak digits read as letters when a digit stands between letters)
    CROSS JOIN LATERAL (SELECT pg_catalog.lower(pg_catalog.translate(n.f, 'İ', 'I')) AS lf OFFSET 0) AS l
    CROSS JOIN LATERAL (SELECT nullif(pg_catalog.translate(l.lf, '01345789@$|', 'oieastbgasl'), l.lf) AS leet
                        OFFSET 0) AS k
    CROSS JOIN LATERAL (VALUES
        -- (a verb, and what it overrides or one of the phrases: the words looked
        -- for first keep the large pattern off ordinary text)
        ('override-phrase', CASE WHEN (strpos(l.lf, 'ignor') > 0 OR strpos(l.lf, 'disregard') > 0
                                      OR strpos(l.lf, 'forget') > 0 OR strpos(l.lf, 'override') > 0
                                      OR strpos(l.lf, 'bypass') > 0 OR strpos(l.lf, 'skip') > 0
                                      OR strpos(l.lf, 'aside') > 0 OR strpos(l.lf, 'discard') > 0
                                      OR strpos(l.lf, 'abandon') > 0 OR strpos(l.lf, 'throw') > 0
                                      OR strpos(l.lf, 'dismiss') > 0 OR strpos(l.lf, 'neglect') > 0
                                      OR strpos(l.lf, 'pay no') > 0 OR strpos(l.lf, 'follow') > 0
                                      OR strpos(l.lf, 'obey') > 0 OR strpos(l.lf, 'drop') > 0
                                      OR strpos(l.lf, 'scrap') > 0 OR strpos(l.lf, 'nullify') > 0
                                      OR strpos(l.lf, 'supersede') > 0
                                      OR strpos(l.lf, 'you are now') > 0 OR strpos(l.lf, 'from now on') > 0
                                      OR strpos(l.lf, 'new instructions') > 0 OR strpos(l.lf, 'new system') > 0
                                      OR strpos(l.lf, 'the user') > 0
                                      OR strpos(l.lf, 'developer mode') > 0 OR strpos(l.lf, 'jailbreak') > 0
                                      OR strpos(l.lf, 'act as ') > 0 OR strpos(l.lf, 'pretend ') > 0
                                      OR strpos(l.lf, 'your real ') > 0 OR strpos(l.lf, 'your true ') > 0
                                      OR strpos(l.lf, 'your new ') > 0)
                                 AND (strpos(l.lf, 'instruction') > 0 OR strpos(l.lf, 'prompt') > 0 OR strpos(l.lf, 'rule') > 0
                                      OR strpos(l.lf, 'message') > 0 OR strpos(l.lf, 'directi') > 0 OR strpos(l.lf, 'guid') > 0
                                      OR strpos(l.lf, 'context') > 0 OR strpos(l.lf, 'constraint') > 0 OR strpos(l.lf, 'order') > 0
                                      OR strpos(l.lf, 'programming') > 0 OR strpos(l.lf, 'restriction') > 0
                                      OR strpos(l.lf, 'polic') > 0 OR strpos(l.lf, 'safeguard') > 0 OR strpos(l.lf, 'training') > 0
                                      OR strpos(l.lf, 'principle') > 0
                                      OR strpos(l.lf, 'ignor') > 0 OR strpos(l.lf, 'disregard') > 0 OR strpos(l.lf, 'forget') > 0
                                      OR strpos(l.lf, 'you are now') > 0 OR strpos(l.lf, 'from now on') > 0
                                      OR strpos(l.lf, 'new system') > 0
                                      OR (strpos(l.lf, 'do not') > 0 OR strpos(l.lf, 'without telling') > 0)
                                         AND strpos(l.lf, 'the user') > 0
                                      OR strpos(l.lf, 'developer mode') > 0 OR strpos(l.lf, 'jailbreak') > 0
                                      OR strpos(l.lf, 'act as ') > 0 OR strpos(l.lf, 'pretend ') > 0
                                      OR strpos(l.lf, 'your real ') > 0 OR strpos(l.lf, 'your true ') > 0
                                      OR strpos(l.lf, 'your new ') > 0)
                                 THEN n.f ~* '\m(?:ignore|disregard|forget|override|bypass|skip|(?:set|put|cast|lay|push)\s+aside|discard|abandon|throw\s+(?:out|away)|dismiss|neglect|pay\s+no\s+(?:attention|heed|mind)\s+to|(?:stop|quit)\s+following|(?:do\s+not|don''?t|no\s+longer|never)\s+(?:follow|obey|heed|apply|respect)|drop|scrap|nullify|supersede)\s+(?:(?:all|any|every|each|one|the|your|of|my|these|those|such)\s+)*(?:previous|prior|above|earlier|preceding|system|existing|original|safety|other|former|initial|old|foregoing|aforementioned|above-mentioned|default|built-in|given)\s+(?:instructions?|prompts?|rules?|messages?|directions?|directives?|guidelines?|guidance|context|constraints?|orders?|programming|restrictions?|policies|policy|safeguards?|system\s+prompt|training|principles)|\m(?:ignore|disregard|forget|override|bypass|(?:set|put|cast)\s+aside|discard|abandon|dismiss)\s+(?:(?:all|of|every|one)\s+)*your\s+(?:instructions?|prompts?|rules?|messages?|directions?|directives?|guidelines?|guidance|context|constraints?|orders?|programming|restrictions?|policies|policy|safeguards?|system\s+prompt|training|principles)|(?:ignore|disregard|forget)\s+(?:everything|anything|all|whatever)\s+(?:(?:that\s+)?(?:was\s+|you\s+were\s+|i\s+|you\s+have\s+been\s+)?(?:said|told|written|stated|given)\M|(?:above|before|prior|previously|earlier)\M)|(?:ignore|disregard)\s+(?:(?:what|anything|whatever)\s+the\s+(?:user|human)\s+(?:says|asks|wants|types|writes)|(?:the\s+|any\s+)?(?:user|human)(?:''s)?\s+(?:instructions|requests|wishes|messages)\M)|you are now|from now on,? you|new (?:system )?instructions\s*:|new system prompt|do not (?:tell|inform|mention (?:this )?to) the user|without telling the user|developer mode enabled|(?:enter|activate|act in|respond in) developer mode|jailbreak|act as (?:an? )?(?:unrestricted|different)|pretend (?:that )?you are|pretend to be|your (?:real|true|new) (?:instructions|task|goal|role|purpose) (?:is|are)' ELSE false END),
        -- the same in other languages: Latin-script ones (a verb of theirs in the text) and
        -- the others (a text with a character outside ASCII), one regular expression each
        ('override-phrase', CASE WHEN (strpos(l.lf, 'olvid') > 0 OR strpos(l.lf, 'oubli') > 0
                                      OR strpos(l.lf, 'esque') > 0 OR strpos(l.lf, 'vergiss') > 0
                                      OR strpos(l.lf, 'desconsider') > 0 OR strpos(l.lf, 'omis') > 0
                                      OR strpos(l.lf, 'compte') > 0 OR strpos(l.lf, 'descart') > 0
                                      OR strpos(l.lf, 'omit') > 0 OR strpos(l.lf, 'missacht') > 0
                                      OR strpos(l.lf, 'abaikan') > 0 OR strpos(l.lf, 'lupakan') > 0
                                      OR strpos(l.lf, 'ignor') > 0)
                                  -- (and a word for "previous" of one of these languages)
                                  AND (strpos(l.lf, 'anterior') > 0 OR strpos(l.lf, 'anterieur') > 0
                                       OR strpos(l.lf, 'antérieur') > 0 OR strpos(l.lf, 'previa') > 0
                                       OR strpos(l.lf, 'prévia') > 0 OR strpos(l.lf, 'precedent') > 0
                                       OR strpos(l.lf, 'précédent') > 0 OR strpos(l.lf, 'préalable') > 0
                                       OR strpos(l.lf, 'prealable') > 0 OR strpos(l.lf, 'vorherig') > 0
                                       OR strpos(l.lf, 'bisherig') > 0 OR strpos(l.lf, 'früher') > 0
                                       OR strpos(l.lf, 'obigen') > 0 OR strpos(l.lf, 'vorigen') > 0
                                       OR strpos(l.lf, 'sebelumnya') > 0)
                                 THEN n.f ~* '\m(?:ignora|ignore|ignorad|ignoren|olvida|olvide|olviden|descarta|descarte|omite|omita|haz\s+caso\s+omiso\s+(?:de|a))\s+(?:(?:todas?|todos|las|los|el|la|tus|sus)\s+)*(?:instrucciones|reglas|indicaciones|órdenes|ordenes|directrices|normas)\s+(?:anteriores|previas|precedentes)|\m(?:ignore|ignora|ignorem|esqueça|esqueca|esquece|desconsidere|desconsidera|descarte)\s+(?:(?:todas?|todos|as|os|a|o|suas|tuas)\s+)*(?:instruções|instrucoes|regras|orientações|orientacoes|diretrizes|ordens)\s+(?:anteriores|prévias|previas)|\m(?:ignore|ignorez|oublie|oubliez|ne\s+tiens?\s+pas\s+compte\s+(?:de|des|du)|ne\s+tenez\s+pas\s+compte\s+(?:de|des|du))\s+(?:(?:toutes|tous|les|des|la|le|tes|vos)\s+)*(?:instructions|consignes|règles|regles|directives|ordres)\s+(?:précédentes|precedentes|antérieures|anterieures|préalables|prealables)|\m(?:ignoriere|ignorier|ignorieren\s+sie|vergiss|vergessen\s+sie|missachte|missachten\s+sie)\s+(?:(?:alle|die|deine|ihre|sämtliche)\s+)*(?:vorherigen|bisherigen|früheren|obigen|vorigen)\s+(?:anweisungen|regeln|instruktionen|vorgaben|befehle)|\m(?:abaikan|lupakan)\s+(?:semua\s+)?(?:instruksi|perintah|aturan|petunjuk)\s+sebelumnya' ELSE false END),
        ('override-phrase', CASE WHEN pg_catalog.octet_length(n.f) <> pg_catalog.length(n.f)
                                      AND n.f ~ '[\u0400-\u04ff\u0600-\u06ff\u0900-\u09ff\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]'
                                 THEN n.f ~* '(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|не\s+обращай(?:те)?\s+внимания\s+на)\s+(?:все\s+|всё\s+)?(?:предыдущие|прежние|прошлые|вышеуказанные)\s+(?:инструкции|указания|правила|команды)|(?:忽略|无视|忽视|忘记|忘掉|不要理会|不要遵守|不再遵守)[^。\n]*(?:之前|以上|先前|此前|上面|前面|原来|原先)[^。\n]*(?:指令|指示|规则|提示|说明|命令|要求)|(?:以前|前|これまで|上記|先ほど|今まで)の[^。\n]*(?:指示|ルール|命令|指令|プロンプト|規則)[^。\n]*(?:無視|忘れ)|(?:이전|앞의|위의|기존)[^.\n]*(?:지시|지침|규칙|명령|프롬프트)[^.\n]*(?:무시|잊어)|(?:पिछले|पहले|पूर्व|ऊपर)[^।\n]*(?:निर्देश|नियम|आदेश)[^।\n]*(?:अनदेखा|भूल|नज़रअंदाज़|नजरअंदाज|उपेक्षा)|(?:تجاهل|انس|انسَ|إنس|تناسى|لا\s+تتبع)[^.\n]*(?:التعليمات|الأوامر|الاوامر|القواعد|الإرشادات|التوجيهات)[^.\n]*(?:السابقة|الماضية|أعلاه)|(?:পূর্ববর্তী|আগের|পূর্বের)[^।\n]*(?:নির্দেশ|নিয়ম|আদেশ)[^।\n]*(?:উপেক্ষা|ভুলে)' ELSE false END),
        -- leetspeak: 1gn0r3 4ll pr3v10u5 1n5truct10n5
        ('override-phrase', CASE WHEN k.leet IS NOT NULL
                                      AND (strpos(k.leet, 'ignor') > 0 OR strpos(k.leet, 'disregard') > 0
                                           OR strpos(k.leet, 'forget') > 0 OR strpos(k.leet, 'override') > 0
                                           OR strpos(k.leet, 'bypass') > 0 OR strpos(k.leet, 'aside') > 0
                                           OR strpos(k.leet, 'discard') > 0 OR strpos(k.leet, 'abandon') > 0
                                           OR strpos(k.leet, 'dismiss') > 0 OR strpos(k.leet, 'follow') > 0
                                           OR strpos(k.leet, 'neglect') > 0 OR strpos(k.leet, 'skip') > 0
                                           OR strpos(k.leet, 'throw') > 0 OR strpos(k.leet, 'obey') > 0
                                           OR strpos(k.leet, 'drop') > 0 OR strpos(k.leet, 'pay no') > 0
                                           OR strpos(k.leet, 'scrap') > 0 OR strpos(k.leet, 'nullify') > 0
                                           OR strpos(k.leet, 'supersede') > 0 OR strpos(k.leet, 'you are now') > 0
                                           OR strpos(k.leet, 'from now on') > 0 OR strpos(k.leet, 'jailbreak') > 0)
                                      AND (strpos(k.leet, 'instruction') > 0 OR strpos(k.leet, 'prompt') > 0 OR strpos(k.leet, 'rule') > 0
                                      OR strpos(k.leet, 'message') > 0 OR strpos(k.leet, 'directi') > 0 OR strpos(k.leet, 'guid') > 0
                                      OR strpos(k.leet, 'context') > 0 OR strpos(k.leet, 'constraint') > 0 OR strpos(k.leet, 'order') > 0
                                      OR strpos(k.leet, 'programming') > 0 OR strpos(k.leet, 'restriction') > 0
                                      OR strpos(k.leet, 'polic') > 0 OR strpos(k.leet, 'safeguard') > 0 OR strpos(k.leet, 'training') > 0
                                      OR strpos(k.leet, 'principle') > 0
                                      OR strpos(k.leet, 'ignor') > 0 OR strpos(k.leet, 'disregard') > 0 OR strpos(k.leet, 'forget') > 0
                                      OR strpos(k.leet, 'you are now') > 0 OR strpos(k.leet, 'from now on') > 0
                                      OR strpos(k.leet, 'new system') > 0
                                      OR (strpos(k.leet, 'do not') > 0 OR strpos(k.leet, 'without telling') > 0)
                                         AND strpos(k.leet, 'the user') > 0
                                      OR strpos(k.leet, 'developer mode') > 0 OR strpos(k.leet, 'jailbreak') > 0
                                      OR strpos(k.leet, 'act as ') > 0 OR strpos(k.leet, 'pretend ') > 0
                                      OR strpos(k.leet, 'your real ') > 0 OR strpos(k.leet, 'your true ') > 0
                                      OR strpos(k.leet, 'your new ') > 0)
                                 THEN k.leet ~* '\m(?:ignore|disregard|forget|override|bypass|skip|(?:set|put|cast|lay|push)\s+aside|discard|abandon|throw\s+(?:out|away)|dismiss|neglect|pay\s+no\s+(?:attention|heed|mind)\s+to|(?:stop|quit)\s+following|(?:do\s+not|don''?t|no\s+longer|never)\s+(?:follow|obey|heed|apply|respect)|drop|scrap|nullify|supersede)\s+(?:(?:all|any|every|each|one|the|your|of|my|these|those|such)\s+)*(?:previous|prior|above|earlier|preceding|system|existing|original|safety|other|former|initial|old|foregoing|aforementioned|above-mentioned|default|built-in|given)\s+(?:instructions?|prompts?|rules?|messages?|directions?|directives?|guidelines?|guidance|context|constraints?|orders?|programming|restrictions?|policies|policy|safeguards?|system\s+prompt|training|principles)|\m(?:ignore|disregard|forget|override|bypass|(?:set|put|cast)\s+aside|discard|abandon|dismiss)\s+(?:(?:all|of|every|one)\s+)*your\s+(?:instructions?|prompts?|rules?|messages?|directions?|directives?|guidelines?|guidance|context|constraints?|orders?|programming|restrictions?|policies|policy|safeguards?|system\s+prompt|training|principles)|(?:ignore|disregard|forget)\s+(?:everything|anything|all|whatever)\s+(?:(?:that\s+)?(?:was\s+|you\s+were\s+|i\s+|you\s+have\s+been\s+)?(?:said|told|written|stated|given)\M|(?:above|before|prior|previously|earlier)\M)|(?:ignore|disregard)\s+(?:(?:what|anything|whatever)\s+the\s+(?:user|human)\s+(?:says|asks|wants|types|writes)|(?:the\s+|any\s+)?(?:user|human)(?:''s)?\s+(?:instructions|requests|wishes|messages)\M)|you are now|from now on,? you|new (?:system )?instructions\s*:|new system prompt|do not (?:tell|inform|mention (?:this )?to) the user|without telling the user|developer mode enabled|(?:enter|activate|act in|respond in) developer mode|jailbreak|act as (?:an? )?(?:unrestricted|different)|pretend (?:that )?you are|pretend to be|your (?:real|true|new) (?:instructions|task|goal|role|purpose) (?:is|are)' ELSE false END),
        ('role-marker', CASE WHEN (strpos(l.lf, '<') > 0 OR strpos(l.lf, '[') > 0 OR strpos(l.lf, '>') > 0
                                 OR strpos(l.lf, '(') > 0 OR strpos(l.lf, '*') > 0 OR strpos(l.lf, '—') > 0
                                 OR strpos(l.lf, '–') > 0 OR strpos(l.lf, '--') > 0
                                 OR strpos(l.lf, ':') > 0
                                    AND (strpos(l.lf, 'system') > 0 OR strpos(l.lf, 'assistant') > 0
                                         OR strpos(l.lf, 'developer') > 0 OR strpos(l.lf, 'human') > 0
                                         OR strpos(l.lf, 'user') > 0 OR strpos(l.lf, 'instruction') > 0
                                         OR strpos(l.lf, 'response') > 0 OR strpos(l.lf, 'input') > 0
                                         OR strpos(l.lf, 'admin') > 0 OR strpos(l.lf, 'operator') > 0))
                             -- (every role line names a role, or is a template's token)
                             AND (strpos(l.lf, 'system') > 0 OR strpos(l.lf, 'assistant') > 0
                                  OR strpos(l.lf, 'developer') > 0 OR strpos(l.lf, 'human') > 0
                                  OR strpos(l.lf, 'user') > 0 OR strpos(l.lf, 'instruction') > 0
                                  OR strpos(l.lf, 'response') > 0 OR strpos(l.lf, 'input') > 0
                                  OR strpos(l.lf, 'admin') > 0 OR strpos(l.lf, 'operator') > 0
                                  OR strpos(l.lf, '<|') > 0 OR strpos(l.lf, 'inst]') > 0 OR strpos(l.lf, 'sys>>') > 0)
                            THEN n.f ~* '(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*(?:#+\s*)?(?:system|assistant|developer|human|user)\s*(?:prompt\s*)?:(?!=)|(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*#+\s*(?:instruction|response|input)\s*:|<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|instructions?)>|(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])[ \t]*(?:>[ \t]*)?(?:system|assistant|developer|admin|administrator|operator)>(?!>)|(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])[ \t]*(?:>[ \t]*)?(?:\*{1,2}|\[|<<|\()?[ \t]*(?:system|assistant|developer|admin|administrator|operator)[ \t]+(?:message|prompt|note|notice|instructions?|override|update)[ \t]*(?:\*{1,2}|\]|>>|\))?[ \t]*(?:—|–|--|:|>)|(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])[ \t]*(?:>[ \t]*)?(?:\*{1,2}|\[|<<|\()[ \t]*(?:system|assistant|developer|admin|administrator|operator)[ \t]*(?:\*{1,2}|\]|>>|\))[ \t]*(?::|—|–|--|[ \t][^\n\r]*[a-z])|(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])[ \t]*>[ \t]*(?:system|assistant|developer)[ \t]*:' ELSE false END),
        ('tool-call', CASE WHEN (strpos(l.lf, '"') > 0 OR strpos(l.lf, '<') > 0 OR strpos(l.lf, '(') > 0
                                OR strpos(l.lf, '[tool') > 0 OR strpos(l.lf, 'to=') > 0
                                OR strpos(l.lf, ':') > 0 AND strpos(l.lf, E'\n') > 0)
                           -- (a tool's or a function's name or arguments, a template's token)
                           AND (strpos(l.lf, 'tool') > 0 OR strpos(l.lf, 'function') > 0
                                OR strpos(l.lf, 'recipient_name') > 0 OR strpos(l.lf, 'invoke') > 0
                                OR strpos(l.lf, 'antml:') > 0 OR strpos(l.lf, 'arg') > 0
                                OR strpos(l.lf, 'input') > 0 OR strpos(l.lf, 'param') > 0
                                OR strpos(l.lf, '<|') > 0 OR strpos(l.lf, 'execute_') > 0
                                OR strpos(l.lf, '(') > 0 AND strpos(l.lf, '=') > 0)
                            THEN n.f ~* '"(?:tool_use|tool_calls|function_call|tool_call|tool_result|recipient_name|tool_name)"|<(?:tool_call|tool_use|tool_result|function_calls|function_results|invoke|antml:\w+)[\s>]|"(?:name|tool|function)"\s*:\s*"[^"]+"\s*,\s*"(?:arguments|args|input|parameters|params)"\s*:|"(?:arguments|args|input|parameters|params)"\s*:\s*\{[^{}]*\}\s*,\s*"(?:name|tool|function)"\s*:\s*"|"type"\s*:\s*"(?:tool_use|function)"|\m(?:bash|shell|run_shell_command|run_shell|execute_command|execute_bash|exec_command|run_command|run_terminal_cmd|terminal|computer|str_replace_editor|str_replace_based_edit_tool|write_file|read_file|edit_file|create_file|delete_file|apply_patch|web_fetch|webfetch|fetch_url|browser|code_interpreter|exec|multiedit|websearch|web_search)\s*\(\s*(?:command|cmd|file_path|path|content|code|script|url|query|args?)\s*=|\mfunctions\.\w+\s*\(|\mto=functions\.\w+|\[TOOL_CALLS\]|<\|python_tag\|>|<function=[\w.-]+>|<｜tool▁call|<\|call\|>|<execute_\w+>|<tool_code>|(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])[ \t]*-?[ \t]*(?:tool|tool_name|function|action|call|name)[ \t]*:[ \t]*[\"'']?[\w.-]+[\"'']?[ \t]*\r?\n[ \t]*-?[ \t]*(?:args|arguments|action_input|tool_input|parameters)[ \t]*:' ELSE false END),
        ('external-link', CASE WHEN strpos(l.lf, '//') > 0
                            THEN n.f ~* '!\[[^\]]*\]\(\s*<?(?:https?:)?//|\[[^\]]*\]\(\s*<?(?:https?:)?//|<(?:img|iframe|script|a|link)\M[^>]*(?:src|href)\s*=\s*["'']?(?:https?:)?//' ELSE false END),
        ('payload-heading', CASE WHEN strpos(l.lf, '#') > 0
                            THEN n.f ~* '(?:^|[\n\r\u000b\u000c\u0085\u2028\u2029])\s*#+\s*(?:pybrain memory|BLOCKER rules|Pinned memories|PATTERN rules|Open tasks|Skills[ \t]*(?:\(|[\n\r\u000b\u000c\u0085\u2028\u2029]|$)|Handoff from|Other sessions|Action items to acknowledge|Context pack \S+ v\d|How similar problems were solved|Where the project stood)' ELSE false END),
        ('wrapper-tag', CASE WHEN strpos(l.lf, '<') > 0
                            THEN n.f ~* '(?<!`)</?(?:pybrain-context|system-reminder|user-prompt-submit-hook|session-start-hook|command-name|command-message|command-args|command-contents|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr|context-window|system-prompt|user-memory|project-instructions)(?:\s[^>]*)?>' ELSE false END),
        ('shell-pipe', CASE WHEN (strpos(l.lf, 'curl') > 0 OR strpos(l.lf, 'wget') > 0 OR strpos(l.lf, 'iwr') > 0
                                 OR strpos(l.lf, 'irm') > 0 OR strpos(l.lf, 'invoke-') > 0 OR strpos(l.lf, 'iex') > 0
                                 OR strpos(l.lf, 'downloadstring') > 0 OR strpos(l.lf, 'certutil') > 0
                                 OR strpos(l.lf, 'bitsadmin') > 0)
                            -- (piped, chained or substituted, or run by iex)
                            AND (strpos(l.lf, '|') > 0 OR strpos(l.lf, ';') > 0 OR strpos(l.lf, '&&') > 0
                                 OR strpos(l.lf, '$(') > 0 OR strpos(l.lf, '<(') > 0 OR strpos(l.lf, '`') > 0
                                 OR strpos(l.lf, 'iex') > 0 OR strpos(l.lf, 'invoke-expression') > 0)
                            THEN n.f ~* '\m(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|certutil|bitsadmin)\M[^\n\r\u000b\u000c\u0085\u2028\u2029]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:(?:ba|z|k|da|fi)?sh|python[0-9.]*(?!\s+-m\s+json\.tool)|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell)\M|downloadstring\s*\([^\n\r]*\)[^\n\r]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|k|da|fi)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell)\M|\m(?:iex|invoke-expression)\M[ \t]*\(?[^\n\r]*(?:\m(?:iwr|irm|invoke-webrequest|invoke-restmethod)\M|downloadstring|webclient)|\m(?:(?:ba|z|k|da)?sh|eval|source|python[0-9.]*)\s+(?:-c\s+)?[\"'']?(?:\$\(|<\(|`)\s*(?:curl|wget)\M|\m(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|certutil|bitsadmin)\M[^\n\r\u000b\u000c\u0085\u2028\u2029]*(?:&&|;|\|\|)[ \t]*(?:sudo[ \t]+)?(?:(?:ba|z|k|da)?sh[ \t]|source[ \t]|\.[ \t]|\./|\.\\|python[0-9.]*[ \t]|perl[ \t]|ruby[ \t]|node[ \t]|pwsh[ \t]|powershell[ \t]|/tmp/|[A-Za-z0-9_-]+\.(?:exe|ps1|bat|cmd)\M)' ELSE false END),
        -- instructions encoded: a base64 run, or words that read as instructions in ROT13
        -- (looked for without a regular expression: a write runs more than a backend keeps compiled)
        ('encoded-instruction', CASE WHEN (SELECT max(length(w)) FROM unnest(string_to_array(
                                                 pg_catalog.translate(t, E'\n\r\t\f\u000b"''`()[]{}<>,;:', '                     '), ' ')) AS w) >= 20
                                          OR strpos(l.lf, ' gur ') > 0 OR strpos(l.lf, ' nyy ') > 0
                                          OR strpos(l.lf, ' lbhe ') > 0 OR strpos(l.lf, 'cerivbhf') > 0
                                          OR strpos(l.lf, 'vafgehpgvba') > 0 OR strpos(l.lf, 'ehyrf') > 0
                                          OR strpos(l.lf, 'flfgrz') > 0 OR strpos(l.lf, 'vtaber') > 0
                                          OR strpos(l.lf, 'qvfertneq') > 0 OR strpos(l.lf, 'sbetrg') > 0
                                          OR strpos(l.lf, 'rneyvre') > 0 OR strpos(l.lf, 'cevbe') > 0
                                     THEN brain._encoded_signals(t) <> '{}' ELSE false END),
        ('hidden-characters', t ~ '[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\U000e0001-\U000e007f]'
                              OR strpos(t, '<!--') > 0)
    ) AS x(reason, found)
    WHERE x.found
$$;
COMMENT ON FUNCTION brain.injection_signals IS
    'Why a text looks like an instruction to the agent: override-phrase, role-marker (chat roles, template tokens, ### Instruction: / ### Response:), tool-call, external-link, payload-heading (a heading of the boot payload''s own), wrapper-tag (the tags pybrain and agent clients wrap injected context in: <pybrain-context>, <system-reminder>, <command-name>, ...), shell-pipe (a download piped to a shell or interpreter), hidden-characters. Read after NFKC and with common Cyrillic and Greek look-alikes of Latin letters as those letters; every Unicode line break (\r, \v, \f, U+0085, U+2028, U+2029) starts a line. Empty when none. Deterministic (patterns only).';

-- The injection signals of a turn of a conversation, observed with its role
-- in metadata ({"role": "user" | "assistant"}): the "User: " / "Assistant: "
-- its writer put in front of it (brain.observe_transcript does) names the
-- turn's speaker, which metadata records; it is not a role marker in the
-- turn's text. The rest of the text is read as any other.
CREATE OR REPLACE FUNCTION brain._turn_signals(t text, meta jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.injection_signals(CASE
        WHEN meta->>'role' IN ('user', 'assistant')
             AND lower(left(ltrim(t), length(meta->>'role') + 1)) = (meta->>'role') || ':'
        THEN substr(ltrim(t), length(meta->>'role') + 2)
        ELSE t END)
$$;

CREATE OR REPLACE FUNCTION brain.guardrail_stamps(t text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    -- (a text without the word has none: no regular expression runs on it, for a
    -- write runs more than a backend keeps compiled)
    SELECT CASE WHEN strpos(lower(coalesce(t, '')), 'guardrail') = 0 THEN 0 ELSE
        (SELECT coalesce(sum(least(regexp_count(line, '\mguardrail\M', 1, 'i'),
                                   regexp_count(line, '\d{4}-\d{2}-\d{2}'))), 0)::integer
         FROM regexp_split_to_table(t, '\n') AS line) END
$$;
COMMENT ON FUNCTION brain.guardrail_stamps IS
    'Date-stamped GUARDRAIL markers: per line, the smaller of the GUARDRAIL words and the YYYY-MM-DD dates on it. Two or more means merged guardrails.';

CREATE OR REPLACE FUNCTION brain.extract_tags(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT lower(m[1])), '{}')
    FROM regexp_matches(coalesce(t, ''), '(?:^|[^\w&/])#([A-Za-z][\w-]*\w|[A-Za-z])', 'g') AS m
    WHERE strpos(t, '#') > 0  -- (a one-time filter: no pattern runs on a text without one)
$$;
COMMENT ON FUNCTION brain.extract_tags IS '#hashtags, lowercased (not C#, not URL fragments).';

CREATE OR REPLACE FUNCTION brain.extract_people(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT lower(m[1])), '{}')
    FROM regexp_matches(coalesce(t, ''), '(?:^|[^\w.@])@([A-Za-z][\w.-]*\w|[A-Za-z])', 'g') AS m
    WHERE strpos(t, '@') > 0  -- (a one-time filter: no pattern runs on a text without one)
$$;
COMMENT ON FUNCTION brain.extract_people IS '@mentions, lowercased (e-mail addresses are not mentions).';

CREATE OR REPLACE FUNCTION brain.extract_topics(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(word ORDER BY first_at), '{}')
    FROM (
        SELECT m[1] AS word, min(ord) AS first_at
        FROM regexp_matches(coalesce(t, ''), '[a-z0-9,;:)][ \t]+([A-Z][A-Za-z0-9]*[A-Z0-9a-z]{2,})', 'g')
             WITH ORDINALITY AS x(m, ord)
        WHERE m[1] NOT IN ('The', 'This', 'That', 'These', 'Those', 'When', 'Then', 'And',
                           'But', 'For', 'With', 'Not', 'Always', 'Never', 'Use', 'Don')
        GROUP BY m[1]
        ORDER BY min(ord)
        LIMIT 10
    ) AS topic
$$;
COMMENT ON FUNCTION brain.extract_topics IS
    'Capitalized words that do not start a sentence (names, products, acronyms): up to 10, in order of appearance.';

CREATE OR REPLACE FUNCTION brain.extract_action_items(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(s ORDER BY ord), '{}')
    FROM (
        SELECT btrim(s) AS s, ord
        FROM regexp_split_to_table(coalesce(t, ''), '(?<=[.!?])\s+|\n+') WITH ORDINALITY AS x(s, ord)
        WHERE s ~* '\m(need to|needs to|must|follow up|follow-up|todo|to-do|action item|remember to|don''t forget|make sure to)\M'
          -- (a one-time filter: a text without one of the words, in any case of its
          -- ASCII letters, splits into no sentence and runs neither pattern)
          AND (strpos(lower(t), 'need') > 0 OR strpos(lower(t), 'must') > 0 OR strpos(lower(t), 'follow') > 0
               OR strpos(lower(t), 'todo') > 0 OR strpos(lower(t), 'to-do') > 0 OR strpos(lower(t), 'action item') > 0
               OR strpos(lower(t), 'remember to') > 0 OR strpos(lower(t), 'forget') > 0 OR strpos(lower(t), 'make sure to') > 0)
        ORDER BY ord
        LIMIT 10
    ) AS item
$$;
COMMENT ON FUNCTION brain.extract_action_items IS
    'Sentences that ask for an action ("need to", "must", "follow up", "todo", "remember to", ...): up to 10.';

-- How long ago, as every line an agent is shown says it (the prompt context, the
-- boot payload; brain search and the MCP tools say it the same way in Python,
-- pybrain.render.age): 40s, 12m, 5h, 3d, 7w, 4mo, 2y.
-- (No SET clause, every operator named: a boot and a prompt call it for each of
-- their lines, and a SET clause is most of such a call's time.)
CREATE OR REPLACE FUNCTION brain._age_text(at timestamptz, now timestamptz DEFAULT pg_catalog.now())
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN at IS NULL THEN '?'
                WHEN s OPERATOR(pg_catalog.<) 60 THEN s::text OPERATOR(pg_catalog.||) 's'
                WHEN s OPERATOR(pg_catalog.<) 3600 THEN (s OPERATOR(pg_catalog./) 60)::text OPERATOR(pg_catalog.||) 'm'
                WHEN s OPERATOR(pg_catalog.<) 86400 THEN (s OPERATOR(pg_catalog./) 3600)::text OPERATOR(pg_catalog.||) 'h'
                WHEN s OPERATOR(pg_catalog.<) 1209600 THEN (s OPERATOR(pg_catalog./) 86400)::text OPERATOR(pg_catalog.||) 'd'
                WHEN s OPERATOR(pg_catalog.<) 5270400 THEN (s OPERATOR(pg_catalog./) 604800)::text OPERATOR(pg_catalog.||) 'w'
                WHEN s OPERATOR(pg_catalog.<) 63072000 THEN (s OPERATOR(pg_catalog./) 2592000)::text OPERATOR(pg_catalog.||) 'mo'
                ELSE (s OPERATOR(pg_catalog./) 31536000)::text OPERATOR(pg_catalog.||) 'y' END
    FROM (SELECT greatest(0, pg_catalog.floor(pg_catalog.date_part('epoch', now OPERATOR(pg_catalog.-) at)))::bigint
                 AS s) AS x
$$;
COMMENT ON FUNCTION brain._age_text IS
    'How long before now a time was, in one unit: 40s, 12m, 5h, 3d, 7w, 4mo, 2y (? for none).';
