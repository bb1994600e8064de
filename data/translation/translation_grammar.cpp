#include "data/translation/translation_grammar.h"

#include "data/translation/vocabulary.h"

namespace uwaga::translation {

void append(Words& out, const std::string& text) {
  for (std::string& w : tokenize(text)) out.push_back(std::move(w));
}

std::string join(const Words& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

namespace {

bool starts_with_vowel(const std::string& word) {
  return !word.empty() && std::string("aeiou").find(word[0]) != std::string::npos;
}

// rojo -> roja, rojos, rojas; verde -> verdes; azul -> azules.
std::string spanish_adjective(const std::string& ms, Gender gender, bool plural) {
  if (ms.back() == 'o') {
    const std::string stem = ms.substr(0, ms.size() - 1);
    return stem + (gender == kFeminine ? "a" : "o") + (plural ? "s" : "");
  }
  if (!plural) return ms;
  return ms + (ms.back() == 'e' ? "s" : "es");
}

}  // namespace

std::vector<std::pair<Article, bool>> article_forms(const Noun& noun) {
  if (noun.mass) return {{Article::kNone, false}, {Article::kDefinite, false}};
  return {{Article::kDefinite, false},
          {Article::kIndefinite, false},
          {Article::kNone, true},
          {Article::kDefinite, true},
          {Article::kIndefinite, true}};
}

std::vector<int> adjectives_for(const Noun& noun) {
  std::vector<int> out;
  for (int a = 0; a < static_cast<int>(kAdjectives.size()); ++a)
    if (noun.adjectives & kAdjectives[a].kind) out.push_back(a);
  return out;
}

std::vector<NounPhrase> noun_phrases(int n) {
  std::vector<NounPhrase> out;
  std::vector<int> adjectives = adjectives_for(kNouns[n]);
  adjectives.insert(adjectives.begin(), -1);
  for (const auto& [article, plural] : article_forms(kNouns[n]))
    for (int a : adjectives) out.push_back({n, article, plural, a});
  return out;
}

Words english_noun_phrase(const NounPhrase& np) {
  const Noun& noun = kNouns[np.noun];
  const std::string word = np.plural ? noun.en_pl : noun.en;
  const std::string adjective = np.adjective >= 0 ? kAdjectives[np.adjective].en : "";
  Words out;
  if (np.article == Article::kDefinite) out.push_back("the");
  if (np.article == Article::kIndefinite) {
    const std::string& next = adjective.empty() ? word : adjective;
    out.push_back(np.plural ? "some" : starts_with_vowel(next) ? "an" : "a");
  }
  if (!adjective.empty()) out.push_back(adjective);
  out.push_back(word);
  return out;
}

Words spanish_noun_phrase(const NounPhrase& np) {
  const Noun& noun = kNouns[np.noun];
  const bool f = noun.gender == kFeminine;
  Words out;
  if (np.article == Article::kDefinite)
    out.push_back(np.plural ? (f ? "las" : "los") : (f ? "la" : "el"));
  if (np.article == Article::kIndefinite)
    out.push_back(np.plural ? (f ? "unas" : "unos") : (f ? "una" : "un"));
  out.push_back(np.plural ? noun.es_pl : noun.es);
  if (np.adjective >= 0)
    out.push_back(spanish_adjective(kAdjectives[np.adjective].es, noun.gender, np.plural));
  return out;
}

Words english_verb(const Sentence& s) {
  const Subject& subject = kSubjects[s.subject];
  const Verb& verb = kVerbs[s.verb];
  const bool third_singular = subject.person == kEl;
  Words out;
  if (s.progressive) {
    out.push_back(subject.person == kYo ? "am" : third_singular ? "is" : "are");
    if (s.negated) out.push_back("not");
    append(out, verb.en_ing);
  } else if (s.negated) {
    out.push_back(third_singular ? "does" : "do");
    out.push_back("not");
    append(out, verb.en);
  } else {
    append(out, third_singular ? verb.en_3s : verb.en);
  }
  return out;
}

namespace {

std::string spanish_present(const Verb& verb, Person person) {
  if (verb.es_present[person]) return verb.es_present[person];
  const std::string inf = verb.es;
  const std::string stem = inf.substr(0, inf.size() - 2);
  const char type = inf[inf.size() - 2];  // a, e or i
  static const char* const kAr[] = {"o", "as", "a", "amos", "an"};
  static const char* const kEr[] = {"o", "es", "e", "emos", "en"};
  static const char* const kIr[] = {"o", "es", "e", "imos", "en"};
  return stem + (type == 'a' ? kAr : type == 'e' ? kEr : kIr)[person];
}

std::string spanish_gerund(const Verb& verb) {
  if (verb.es_gerund) return verb.es_gerund;
  const std::string inf = verb.es;
  const std::string stem = inf.substr(0, inf.size() - 2);
  return stem + (inf[inf.size() - 2] == 'a' ? "ando" : "iendo");
}

// "como", "no como", "estamos comiendo", "no estamos comiendo".
Words spanish_verb(const Sentence& s) {
  static const char* const kEstar[] = {"estoy", "estás", "está", "estamos", "están"};
  const Person person = kSubjects[s.subject].person;
  const Verb& verb = kVerbs[s.verb];
  Words out;
  if (s.negated) out.push_back("no");
  if (s.progressive) {
    out.push_back(kEstar[person]);
    out.push_back(spanish_gerund(verb));
  } else {
    out.push_back(spanish_present(verb, person));
  }
  return out;
}

}  // namespace

Words english_words(const Sentence& s) {
  Words out;
  append(out, kSubjects[s.subject].en);
  for (std::string& w : english_verb(s)) out.push_back(std::move(w));
  if (s.object.noun >= 0)
    for (std::string& w : english_noun_phrase(s.object)) out.push_back(std::move(w));
  if (s.phrase >= 0) append(out, kPhrases[s.phrase].en);
  return out;
}

Words spanish_words(const Sentence& s) {
  Words out;
  const Subject& subject = kSubjects[s.subject];
  if (!subject.dropped_in_spanish) append(out, subject.es);
  for (std::string& w : spanish_verb(s)) out.push_back(std::move(w));
  if (s.object.noun >= 0)
    for (std::string& w : spanish_noun_phrase(s.object)) out.push_back(std::move(w));
  if (s.phrase >= 0) append(out, kPhrases[s.phrase].es);
  return out;
}

bool takes_object(const Verb& verb, int noun) {
  if (noun < 0) return verb.objects == 0 || verb.object_optional;
  return (verb.objects & kNouns[noun].tags) != 0;
}

bool phrase_allowed(const Sentence& s, int p) {
  const Phrase& phrase = kPhrases[p];
  if (phrase.when == When::kSimple && s.progressive) return false;
  if (phrase.when == When::kProgressive && !s.progressive) return false;
  return std::string(phrase.en) != "with " + std::string(kSubjects[s.subject].en);
}

std::vector<Triple> all_triples() {
  std::vector<Triple> out;
  for (int s = 0; s < static_cast<int>(kSubjects.size()); ++s)
    for (int v = 0; v < static_cast<int>(kVerbs.size()); ++v)
      for (int n = -1; n < static_cast<int>(kNouns.size()); ++n)
        if (takes_object(kVerbs[v], n)) out.push_back({s, v, n});
  return out;
}

Triple triple_of(const Sentence& s) { return {s.subject, s.verb, s.object.noun}; }

std::string triple_key(const Triple& t) {
  return std::string(kSubjects[t.subject].en) + "|" + kVerbs[t.verb].en + "|" +
         (t.noun >= 0 ? kNouns[t.noun].en : "-");
}

Sentence sample_sentence(const Triple& t, Generator& gen) {
  Sentence s;
  s.subject = t.subject;
  s.verb = t.verb;
  s.progressive = kVerbs[t.verb].progressive && gen.below(2) == 1;
  s.negated = gen.below(4) == 0;
  if (t.noun >= 0) {
    const Noun& noun = kNouns[t.noun];
    const auto forms = article_forms(noun);
    const auto& [article, plural] = forms[gen.below(forms.size())];
    s.object = {t.noun, article, plural, -1};
    const std::vector<int> adjectives = adjectives_for(noun);
    if (!adjectives.empty() && gen.uniform() < 0.4)
      s.object.adjective = adjectives[gen.below(adjectives.size())];
  }
  if (gen.uniform() < 0.3) {
    std::vector<int> phrases;
    for (int p = 0; p < static_cast<int>(kPhrases.size()); ++p)
      if (phrase_allowed(s, p)) phrases.push_back(p);
    s.phrase = phrases[gen.below(phrases.size())];
  }
  return s;
}

std::int64_t sentence_count(const Triple& t) {
  std::int64_t noun_phrases = 1;
  if (t.noun >= 0) {
    const Noun& noun = kNouns[t.noun];
    noun_phrases = static_cast<std::int64_t>(article_forms(noun).size() *
                                             (1 + adjectives_for(noun).size()));
  }
  std::int64_t count = 0;
  for (bool progressive : {false, true}) {
    if (progressive && !kVerbs[t.verb].progressive) continue;
    Sentence s;
    s.subject = t.subject;
    s.verb = t.verb;
    s.progressive = progressive;
    std::int64_t phrases = 1;  // none
    for (int p = 0; p < static_cast<int>(kPhrases.size()); ++p)
      if (phrase_allowed(s, p)) ++phrases;
    count += 2 * noun_phrases * phrases;  // 2: negated or not
  }
  return count;
}

std::int64_t sentence_count(const std::vector<Triple>& triples) {
  std::int64_t count = 0;
  for (const Triple& t : triples) count += sentence_count(t);
  return count;
}

}  // namespace uwaga::translation
