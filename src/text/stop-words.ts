/**
 * wink-nlp's English stop words (the `stopWordFlag` of wink-eng-lite-web-model 1.8.1 under
 * wink-nlp 2.4.0), as analyze.ts asks them: the lower-case ASCII words of the model's lexicon
 * that read as one token flagged as a stop word. A list instead of the model because loading the
 * model costs ~100 ms in every process (a CLI call, each ingest worker), and only this flag and
 * the stemmer were used of it. test/text/stop-words.test.ts derives the list from wink itself and
 * fails when an upgrade changes it (then regenerate it here and bump ANALYZER_VERSION).
 */
export const WINK_STOP_WORDS: ReadonlySet<string> = new Set(
  `a about above abt across after afterwards again against all almost alone along already also although
always am among amongst amount an and another any anyhow anyone anything anyway anywhere are around
as at back bcoz be became because become becomes becoming been before beforehand behind being below
beside besides between beyond both bottom but by call can cd could cuz da did dis do does doin doing
done down due during each eight either eleven else elsewhere empty enough etc even ever every
everyone everywhere except few fifteen fifty first five for former formerly forty four from front
full further get give go had has have he hence her here hereafter hereby herein hereupon hers
herself him himself his how however hundred i ie if in inc indeed into is it its itself just keep
last latter latterly least less made make many may me meanwhile might mine more moreover most mostly
move much must my myself nah name namely neither never nevertheless next nine no nobody none nope
nor not nothing now nowhere of off often on once one only onto or other otherwise our ours ourselves
out over own part per perhaps please pls plz put quite rather re really regarding same say see seem
seemed seeming seems serious seven several shd she should show side since six sixty so some somehow
someone something sometime sometimes somewhere still such take ten than that the their them
themselves then thence there thereafter thereby therefore therein these they third this those though
three through throughout thru thus to together too top toward towards twelve twenty two under unless
until up upon us used using various very via was we well were what whatever when whence whenever
where whereas whereby wherein wherever whether which while who whoever whole whom whose why will
with within without would woz wtv yet you your yours yourself yourselves`.split(/\s+/),
);
