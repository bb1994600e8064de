#include "data/translation_corpus.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <sstream>
#include <unordered_set>

#include "core/error.h"
#include "core/random.h"

namespace uwaga {
namespace {

// ---- the lexicon ---------------------------------------------------------------------------

// The five Spanish persons we use (ustedes shares the ellos forms; no vosotros).
enum Person { kYo, kTu, kEl, kNosotros, kEllos };

struct Subject {
  const char* en;
  const char* es;
  Person person;
  bool dropped_in_spanish;  // yo, tú, nosotros: the verb ending already names the person
};

const std::vector<Subject> kSubjects = {
    {"i", "yo", kYo, true},
    {"you", "tú", kTu, true},
    {"he", "él", kEl, false},
    {"she", "ella", kEl, false},
    {"we", "nosotros", kNosotros, true},
    {"they", "ellos", kEllos, false},
    {"you all", "ustedes", kEllos, false},
    {"the boy", "el niño", kEl, false},
    {"the girl", "la niña", kEl, false},
    {"the man", "el hombre", kEl, false},
    {"the woman", "la mujer", kEl, false},
    {"the children", "los niños", kEllos, false},
    {"my mother", "mi madre", kEl, false},
    {"my father", "mi padre", kEl, false},
    {"my friends", "mis amigos", kEllos, false},
};

// What a noun can be the object of: a verb lists the tags it accepts.
enum Tag : unsigned {
  kEdible = 1u << 0,
  kDrinkable = 1u << 1,
  kCookable = 1u << 2,
  kReadable = 1u << 3,
  kWritable = 1u << 4,
  kOpenable = 1u << 5,
  kWashable = 1u << 6,
  kPortable = 1u << 7,
  kBreakable = 1u << 8,
  kUsable = 1u << 9,
  kFindable = 1u << 10,
  kMakeable = 1u << 11,
  kBuyable = 1u << 12,  // have, want, need, buy, sell: anything
  kVisible = 1u << 13,  // see, watch: anything
};
constexpr unsigned kAnything = kBuyable | kVisible;

// Which adjectives suit a noun, by kind.
enum AdjectiveKind : unsigned {
  kColour = 1u << 0,
  kSize = 1u << 1,
  kAge = 1u << 2,
  kTaste = 1u << 3,
  kTemperature = 1u << 4,
};
constexpr unsigned kLooks = kColour | kSize | kAge;

enum Gender { kMasculine, kFeminine };

struct Noun {
  const char* en;     // singular
  const char* en_pl;  // plural
  const char* es;
  const char* es_pl;
  Gender gender;
  bool mass;  // bread, milk: no plural, no "a", may stand alone
  unsigned tags;
  unsigned adjectives;
};

const std::vector<Noun> kNouns = {
    // things
    {"car", "cars", "coche", "coches", kMasculine, false,
     kAnything | kWashable | kUsable | kFindable, kLooks},
    {"house", "houses", "casa", "casas", kFeminine, false, kAnything | kWashable, kLooks},
    {"book", "books", "libro", "libros", kMasculine, false,
     kAnything | kReadable | kWritable | kOpenable | kPortable | kFindable, kLooks},
    {"letter", "letters", "carta", "cartas", kFeminine, false,
     kAnything | kReadable | kWritable | kOpenable | kPortable | kFindable, kAge},
    {"newspaper", "newspapers", "periódico", "periódicos", kMasculine, false,
     kAnything | kReadable | kPortable | kFindable, kAge},
    {"door", "doors", "puerta", "puertas", kFeminine, false,
     kAnything | kOpenable | kWashable | kBreakable, kLooks},
    {"window", "windows", "ventana", "ventanas", kFeminine, false,
     kAnything | kOpenable | kWashable | kBreakable, kSize | kAge},
    {"table", "tables", "mesa", "mesas", kFeminine, false,
     kAnything | kWashable | kPortable | kBreakable, kLooks},
    {"chair", "chairs", "silla", "sillas", kFeminine, false,
     kAnything | kWashable | kPortable | kBreakable, kLooks},
    {"shirt", "shirts", "camisa", "camisas", kFeminine, false,
     kAnything | kWashable | kPortable | kFindable, kLooks},
    {"shoe", "shoes", "zapato", "zapatos", kMasculine, false,
     kAnything | kWashable | kFindable, kLooks},
    {"box", "boxes", "caja", "cajas", kFeminine, false,
     kAnything | kOpenable | kPortable | kBreakable | kFindable, kLooks},
    {"bag", "bags", "bolsa", "bolsas", kFeminine, false,
     kAnything | kOpenable | kPortable | kFindable, kLooks},
    {"bicycle", "bicycles", "bicicleta", "bicicletas", kFeminine, false,
     kAnything | kWashable | kUsable | kFindable | kBreakable, kLooks},
    {"key", "keys", "llave", "llaves", kFeminine, false,
     kAnything | kUsable | kPortable | kFindable | kBreakable, kLooks},
    {"phone", "phones", "teléfono", "teléfonos", kMasculine, false,
     kAnything | kUsable | kPortable | kFindable | kBreakable, kLooks},
    {"computer", "computers", "ordenador", "ordenadores", kMasculine, false,
     kAnything | kUsable | kFindable | kBreakable, kLooks},
    {"cup", "cups", "taza", "tazas", kFeminine, false,
     kAnything | kWashable | kPortable | kBreakable | kUsable, kLooks},
    {"plate", "plates", "plato", "platos", kMasculine, false,
     kAnything | kWashable | kPortable | kBreakable, kLooks},
    {"glass", "glasses", "vaso", "vasos", kMasculine, false,
     kAnything | kWashable | kPortable | kBreakable | kUsable, kSize | kAge},
    {"hat", "hats", "sombrero", "sombreros", kMasculine, false,
     kAnything | kFindable | kPortable, kLooks},
    {"ball", "balls", "pelota", "pelotas", kFeminine, false,
     kAnything | kFindable | kPortable, kLooks},
    {"pen", "pens", "bolígrafo", "bolígrafos", kMasculine, false,
     kAnything | kUsable | kFindable, kColour | kAge},
    // food that can be counted
    {"apple", "apples", "manzana", "manzanas", kFeminine, false,
     kAnything | kEdible | kPortable, kColour | kTaste},
    {"orange", "oranges", "naranja", "naranjas", kFeminine, false,
     kAnything | kEdible | kPortable, kTaste},
    {"egg", "eggs", "huevo", "huevos", kMasculine, false,
     kAnything | kEdible | kCookable, kTaste | kTemperature},
    {"cake", "cakes", "tarta", "tartas", kFeminine, false,
     kAnything | kEdible | kMakeable, kTaste | kSize},
    {"cookie", "cookies", "galleta", "galletas", kFeminine, false,
     kAnything | kEdible | kMakeable, kTaste},
    {"sandwich", "sandwiches", "bocadillo", "bocadillos", kMasculine, false,
     kAnything | kEdible | kMakeable | kPortable, kTaste | kTemperature | kSize},
    {"banana", "bananas", "plátano", "plátanos", kMasculine, false,
     kAnything | kEdible | kPortable, kTaste},
    // food and drink by the amount
    {"bread", "", "pan", "", kMasculine, true, kAnything | kEdible | kMakeable,
     kTaste | kTemperature},
    {"rice", "", "arroz", "", kMasculine, true, kAnything | kEdible | kCookable, kTemperature},
    {"soup", "", "sopa", "", kFeminine, true, kAnything | kEdible | kCookable | kMakeable,
     kTemperature},
    {"meat", "", "carne", "", kFeminine, true, kAnything | kEdible | kCookable,
     kTaste | kTemperature},
    {"fish", "", "pescado", "", kMasculine, true, kAnything | kEdible | kCookable,
     kTaste | kTemperature},
    {"cheese", "", "queso", "", kMasculine, true, kAnything | kEdible, kTaste},
    {"chicken", "", "pollo", "", kMasculine, true, kAnything | kEdible | kCookable, kTemperature},
    {"fruit", "", "fruta", "", kFeminine, true, kAnything | kEdible, kTaste},
    {"milk", "", "leche", "", kFeminine, true, kAnything | kDrinkable, kTemperature},
    {"coffee", "", "café", "", kMasculine, true, kAnything | kDrinkable | kMakeable,
     kTaste | kTemperature},
    {"tea", "", "té", "", kMasculine, true, kAnything | kDrinkable | kMakeable,
     kTaste | kTemperature},
    {"juice", "", "zumo", "", kMasculine, true, kAnything | kDrinkable | kMakeable,
     kTaste | kTemperature},
};

struct Adjective {
  const char* en;
  const char* es;  // masculine singular; the other forms follow from its ending
  AdjectiveKind kind;
};

const std::vector<Adjective> kAdjectives = {
    {"red", "rojo", kColour},      {"blue", "azul", kColour},    {"green", "verde", kColour},
    {"white", "blanco", kColour},  {"black", "negro", kColour},  {"yellow", "amarillo", kColour},
    {"big", "grande", kSize},      {"small", "pequeño", kSize},  {"new", "nuevo", kAge},
    {"old", "viejo", kAge},        {"fresh", "fresco", kTaste},  {"sweet", "dulce", kTaste},
    {"hot", "caliente", kTemperature}, {"cold", "frío", kTemperature},
};

struct Verb {
  const char* en;      // base form: "eat", "look for"
  const char* en_3s;   // "eats", "looks for"
  const char* en_ing;  // "eating", "looking for"
  const char* es;      // infinitive: "comer"
  // Present-tense forms (yo, tú, él, nosotros, ellos) of irregular verbs; empty for regular ones.
  std::array<const char*, 5> es_present;
  const char* es_gerund;  // nullptr: the regular -ando / -iendo
  unsigned objects;       // tags of the nouns it takes; 0: none
  bool object_optional;   // "we are eating" as well as "we are eating bread"
  bool progressive;       // false for stative verbs: not "i am having a car"
};

constexpr std::array<const char*, 5> kRegular = {nullptr, nullptr, nullptr, nullptr, nullptr};

const std::vector<Verb> kVerbs = {
    {"eat", "eats", "eating", "comer", kRegular, nullptr, kEdible, true, true},
    {"drink", "drinks", "drinking", "beber", kRegular, nullptr, kDrinkable, true, true},
    {"cook", "cooks", "cooking", "cocinar", kRegular, nullptr, kCookable, true, true},
    {"read", "reads", "reading", "leer", kRegular, "leyendo", kReadable, true, true},
    {"write", "writes", "writing", "escribir", kRegular, nullptr, kWritable, true, true},
    {"open", "opens", "opening", "abrir", kRegular, nullptr, kOpenable, false, true},
    {"close", "closes", "closing", "cerrar", {"cierro", "cierras", "cierra", "cerramos", "cierran"},
     nullptr, kOpenable, false, true},
    {"wash", "washes", "washing", "lavar", kRegular, nullptr, kWashable, false, true},
    {"clean", "cleans", "cleaning", "limpiar", kRegular, nullptr, kWashable, false, true},
    {"carry", "carries", "carrying", "llevar", kRegular, nullptr, kPortable, false, true},
    {"bring", "brings", "bringing", "traer", {"traigo", "traes", "trae", "traemos", "traen"},
     "trayendo", kPortable, false, true},
    {"break", "breaks", "breaking", "romper", kRegular, nullptr, kBreakable, false, true},
    {"use", "uses", "using", "usar", kRegular, nullptr, kUsable, false, true},
    {"look for", "looks for", "looking for", "buscar", kRegular, nullptr, kFindable, false, true},
    {"buy", "buys", "buying", "comprar", kRegular, nullptr, kBuyable, false, true},
    {"sell", "sells", "selling", "vender", kRegular, nullptr, kBuyable, false, true},
    {"make", "makes", "making", "hacer", {"hago", "haces", "hace", "hacemos", "hacen"}, nullptr,
     kMakeable, false, true},
    {"prepare", "prepares", "preparing", "preparar", kRegular, nullptr, kMakeable, false, true},
    {"watch", "watches", "watching", "mirar", kRegular, nullptr, kVisible, false, true},
    {"see", "sees", "seeing", "ver", {"veo", "ves", "ve", "vemos", "ven"}, nullptr, kVisible,
     false, false},
    {"have", "has", "having", "tener", {"tengo", "tienes", "tiene", "tenemos", "tienen"}, nullptr,
     kBuyable, false, false},
    {"want", "wants", "wanting", "querer", {"quiero", "quieres", "quiere", "queremos", "quieren"},
     nullptr, kBuyable, false, false},
    {"need", "needs", "needing", "necesitar", kRegular, nullptr, kBuyable, false, false},
    {"sleep", "sleeps", "sleeping", "dormir", {"duermo", "duermes", "duerme", "dormimos", "duermen"},
     "durmiendo", 0, false, true},
    {"work", "works", "working", "trabajar", kRegular, nullptr, 0, false, true},
    {"walk", "walks", "walking", "caminar", kRegular, nullptr, 0, false, true},
    {"run", "runs", "running", "correr", kRegular, nullptr, 0, false, true},
    {"swim", "swims", "swimming", "nadar", kRegular, nullptr, 0, false, true},
    {"sing", "sings", "singing", "cantar", kRegular, nullptr, 0, false, true},
    {"dance", "dances", "dancing", "bailar", kRegular, nullptr, 0, false, true},
    {"study", "studies", "studying", "estudiar", kRegular, nullptr, 0, false, true},
};

enum class When { kAny, kSimple, kProgressive };

struct Phrase {
  const char* en;
  const char* es;
  When when;
};

const std::vector<Phrase> kPhrases = {
    {"in the kitchen", "en la cocina", When::kAny},
    {"in the park", "en el parque", When::kAny},
    {"in the garden", "en el jardín", When::kAny},
    {"at school", "en la escuela", When::kAny},
    {"at home", "en casa", When::kAny},
    {"with my mother", "con mi madre", When::kAny},
    {"with my friends", "con mis amigos", When::kAny},
    {"with the children", "con los niños", When::kAny},
    {"today", "hoy", When::kAny},
    {"every day", "todos los días", When::kSimple},
    {"now", "ahora", When::kProgressive},
};

// ---- sentences -------------------------------------------------------------------------------

enum class Article { kNone, kDefinite, kIndefinite };

struct NounPhrase {
  int noun = -1;  // -1: no object
  Article article = Article::kNone;
  bool plural = false;
  int adjective = -1;  // -1: none
};

struct Sentence {
  int subject = 0;
  int verb = 0;
  bool progressive = false;
  bool negated = false;
  NounPhrase object;
  int phrase = -1;  // -1: none
};

using Words = std::vector<std::string>;

void append(Words& out, const std::string& text) {
  for (std::string& w : tokenize(text)) out.push_back(std::move(w));
}

std::string join(const Words& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

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

// The article/number combinations a noun allows: mass nouns are singular, with "the" or none;
// countable nouns need an article in the singular and may drop it in the plural.
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

// English: article, adjective, noun — "an old car", "some red houses", "bread".
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

// Spanish: article, noun, adjective, all agreeing — "un coche viejo", "unas casas rojas", "pan".
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

// "eats", "does not eat", "am eating", "are not eating".
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

// A phrase must suit the tense ("now" only with the progressive) and not repeat the subject
// ("my mother eats with my mother").
bool phrase_allowed(const Sentence& s, int p) {
  const Phrase& phrase = kPhrases[p];
  if (phrase.when == When::kSimple && s.progressive) return false;
  if (phrase.when == When::kProgressive && !s.progressive) return false;
  return std::string(phrase.en) != "with " + std::string(kSubjects[s.subject].en);
}

// ---- triples and the split -----------------------------------------------------------------

struct Triple {
  int subject;
  int verb;
  int noun;  // -1: no object
};

std::vector<Triple> all_triples() {
  std::vector<Triple> out;
  for (int s = 0; s < static_cast<int>(kSubjects.size()); ++s)
    for (int v = 0; v < static_cast<int>(kVerbs.size()); ++v)
      for (int n = -1; n < static_cast<int>(kNouns.size()); ++n)
        if (takes_object(kVerbs[v], n)) out.push_back({s, v, n});
  return out;
}

std::string triple_key(int subject, int verb, int noun) {
  return std::string(kSubjects[subject].en) + "|" + kVerbs[verb].en + "|" +
         (noun >= 0 ? kNouns[noun].en : "-");
}

// A sentence around a triple with the rest drawn at random: tense, negation, article, number,
// adjective and phrase.
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

// How many distinct sentences sample_sentence can make around `t`: each of its choices (tense,
// negation, article and number, adjective or none, phrase or none) spells a different English
// sentence, so this is exact; it is an upper bound in any case, since every sentence comes from
// one of these choices.
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

// The words of the training sentences, one set per language.
struct KnownWords {
  std::unordered_set<std::string> english;
  std::unordered_set<std::string> spanish;
};

bool all_known(const Words& words, const std::unordered_set<std::string>& known) {
  return std::all_of(words.begin(), words.end(),
                     [&](const std::string& w) { return known.count(w) != 0; });
}

// `size` distinct pairs made from `triples`, starting with `first` when given. With `known`,
// sentences holding a word outside it are skipped: evaluation should measure generalisation to
// new combinations, not guessing words never seen in training. `split` names the split ("valid")
// and `train_size` the number of training sentences, for the messages.
std::vector<TranslationPair> sample_split(const std::vector<Triple>& triples, std::int64_t size,
                                          std::uint64_t seed, const char* split,
                                          std::int64_t train_size, const Sentence* first,
                                          const KnownWords* known) {
  std::vector<TranslationPair> pairs;
  if (size <= 0) return pairs;
  if (triples.empty())
    fail("translation corpus: the ", split, " split has no subject-verb-object triples; "
         "raise its fraction of the triples");
  std::unordered_set<std::string> seen;
  std::int64_t unknown = 0, repeated = 0;  // draws skipped, and why
  auto add = [&](const Sentence& s) {
    const Words english = english_words(s), spanish = spanish_words(s);
    if (known && !(all_known(english, known->english) && all_known(spanish, known->spanish))) {
      ++unknown;
      return;
    }
    if (!seen.insert(join(english)).second) {
      ++repeated;
      return;
    }
    pairs.push_back({join(english), join(spanish)});
  };
  if (first) add(*first);
  Generator gen(seed);
  const std::int64_t max_attempts = 100 * size + 1000;
  for (std::int64_t attempt = 0;
       static_cast<std::int64_t>(pairs.size()) < size && attempt < max_attempts; ++attempt)
    add(sample_sentence(triples[gen.below(triples.size())], gen));
  if (static_cast<std::int64_t>(pairs.size()) < size) {
    const auto found = static_cast<std::int64_t>(pairs.size());
    // Mostly words never seen in training: the training split is what is too small.
    if (unknown > repeated)
      fail("translation corpus: train_size ", train_size, " is too small for ", split, "_size ",
           size, ": held-out sentences may use only words of the training sentences, and ",
           unknown, " of the ", unknown + repeated + found, " ", split,
           " sentences drawn used other words (", found, " distinct ones found); raise train_size "
           "or lower ", split, "_size");
    fail("translation corpus: ", split, "_size ", size, " is too large: could make only ", found,
         " distinct ", split, " sentences from ", triples.size(), " triples in ",
         unknown + repeated + found, " draws; lower ", split, "_size",
         std::string(split) == "train" ? "" : " or raise " + std::string(split) + "_fraction");
  }
  return pairs;
}

// ---- parsing English back into a Sentence ----------------------------------------------------

bool matches(const Words& tokens, std::size_t at, const Words& words) {
  if (at + words.size() > tokens.size()) return false;
  return std::equal(words.begin(), words.end(), tokens.begin() + static_cast<std::ptrdiff_t>(at));
}

// Tries every way the grammar could have produced `tokens` (a small search: each part narrows the
// next) and returns the first complete parse.
bool parse_sentence(const Words& tokens, Sentence& out) {
  for (int subj = 0; subj < static_cast<int>(kSubjects.size()); ++subj) {
    Words subject_words;
    append(subject_words, kSubjects[subj].en);
    if (!matches(tokens, 0, subject_words)) continue;
    for (int v = 0; v < static_cast<int>(kVerbs.size()); ++v)
      for (int progressive = 0; progressive < 2; ++progressive)
        for (int negated = 0; negated < 2; ++negated) {
          if (progressive && !kVerbs[v].progressive) continue;
          Sentence s;
          s.subject = subj;
          s.verb = v;
          s.progressive = progressive;
          s.negated = negated;
          const Words verb_words = english_verb(s);
          if (!matches(tokens, subject_words.size(), verb_words)) continue;
          const std::size_t after_verb = subject_words.size() + verb_words.size();
          std::vector<NounPhrase> objects;
          if (takes_object(kVerbs[v], -1)) objects.push_back({});
          for (int n = 0; n < static_cast<int>(kNouns.size()); ++n)
            if (takes_object(kVerbs[v], n))
              for (const NounPhrase& np : noun_phrases(n)) objects.push_back(np);
          for (const NounPhrase& np : objects) {
            std::size_t at = after_verb;
            if (np.noun >= 0) {
              const Words object_words = english_noun_phrase(np);
              if (!matches(tokens, at, object_words)) continue;
              at += object_words.size();
            }
            s.object = np;
            s.phrase = -1;
            if (at == tokens.size()) {
              out = s;
              return true;
            }
            for (int p = 0; p < static_cast<int>(kPhrases.size()); ++p) {
              Words phrase_words;
              append(phrase_words, kPhrases[p].en);
              if (phrase_allowed(s, p) && matches(tokens, at, phrase_words) &&
                  at + phrase_words.size() == tokens.size()) {
                s.phrase = p;
                out = s;
                return true;
              }
            }
          }
        }
  }
  return false;
}

Sentence parse_or_fail(const std::string& english) {
  Sentence s;
  if (!parse_sentence(tokenize(english), s))
    fail("translation corpus: '", english, "' is not a sentence of the grammar");
  return s;
}

// The lecture notes' running example, found by parsing so it cannot drift from the tables.
Sentence running_example() { return parse_or_fail("we are eating bread"); }

}  // namespace

TranslationCorpus generate_translation_corpus(const TranslationCorpusOptions& options) {
  if (options.valid_fraction < 0 || options.test_fraction < 0 ||
      options.valid_fraction + options.test_fraction >= 1)
    fail("translation corpus: valid_fraction ", options.valid_fraction, " and test_fraction ",
         options.test_fraction, " must be >= 0 and leave some triples for training");
  // Shuffle the triples with the seed (Fisher–Yates) and deal them out: test, valid, train.
  std::vector<Triple> triples = all_triples();
  Generator gen(options.seed);
  for (std::size_t i = triples.size() - 1; i > 0; --i)
    std::swap(triples[i], triples[gen.below(i + 1)]);
  const auto total = static_cast<double>(triples.size());
  const auto n_test = static_cast<std::size_t>(std::llround(options.test_fraction * total));
  const auto n_valid = static_cast<std::size_t>(std::llround(options.valid_fraction * total));
  if (n_test + n_valid >= triples.size())
    fail("translation corpus: valid_fraction ", options.valid_fraction, " and test_fraction ",
         options.test_fraction, " leave no triples for training");
  std::vector<Triple> test, valid, train;
  for (std::size_t i = 0; i < triples.size(); ++i)
    (i < n_test ? test : i < n_test + n_valid ? valid : train).push_back(triples[i]);

  // A held-out triple goes back to training when training has no triple with its subject, its
  // noun or its (person, verb) pair: otherwise some of its words could never be learned ("bailas"
  // only ever comes from "you dance"). The running example's triple always trains, so the demo
  // sentence is one the model has seen.
  const Sentence ex = running_example();
  std::set<int> subjects, nouns;
  std::set<std::pair<int, int>> person_verbs;
  auto cover = [&](const Triple& t) {
    subjects.insert(t.subject);
    nouns.insert(t.noun);
    person_verbs.insert({kSubjects[t.subject].person, t.verb});
  };
  for (const Triple& t : train) cover(t);
  for (std::vector<Triple>* held_out : {&test, &valid}) {
    std::vector<Triple> kept;
    for (const Triple& t : *held_out) {
      const bool is_example =
          t.subject == ex.subject && t.verb == ex.verb && t.noun == ex.object.noun;
      if (is_example || !subjects.count(t.subject) || !nouns.count(t.noun) ||
          !person_verbs.count({kSubjects[t.subject].person, t.verb})) {
        train.push_back(t);
        cover(t);
      } else {
        kept.push_back(t);
      }
    }
    *held_out = std::move(kept);
  }

  // Sizes the grammar cannot meet fail here, at once, rather than after minutes of sampling.
  struct Split {
    const char* name;
    std::int64_t size;
    const std::vector<Triple>* triples;
    const char* fraction_name;  // the option that gives the split its triples; none for train
    double fraction;
  };
  for (const Split& split : {Split{"train", options.train_size, &train, nullptr, 0},
                             Split{"valid", options.valid_size, &valid, "valid_fraction",
                                   options.valid_fraction},
                             Split{"test", options.test_size, &test, "test_fraction",
                                   options.test_fraction}}) {
    if (split.size < 0)
      fail("translation corpus: ", split.name, "_size ", split.size, " must be >= 0");
    const std::int64_t most = sentence_count(*split.triples);
    if (split.size > most) {
      // Exact for training; held-out sentences may also use only training words, so fewer
      // than `most` may be reachable there.
      std::ostringstream why;
      why << "the " << split.triples->size() << " " << split.name
          << " subject-verb-object triples";
      if (split.fraction_name) why << " (" << split.fraction_name << " " << split.fraction << ")";
      why << " make at most " << most << " distinct sentences; ask for fewer";
      if (split.fraction_name) why << " or raise " << split.fraction_name;
      fail("translation corpus: ", split.name, "_size ", split.size, " cannot be met: ", why.str());
    }
  }

  // Each split samples from its own generator stream, drawn from the main one.
  TranslationCorpus corpus;
  corpus.train = sample_split(train, options.train_size, gen.next_u64(), "train",
                              options.train_size, &ex, nullptr);
  KnownWords known;
  for (const TranslationPair& p : corpus.train) {
    for (std::string& w : tokenize(p.english)) known.english.insert(std::move(w));
    for (std::string& w : tokenize(p.spanish)) known.spanish.insert(std::move(w));
  }
  corpus.valid = sample_split(valid, options.valid_size, gen.next_u64(), "valid",
                              options.train_size, nullptr, &known);
  corpus.test = sample_split(test, options.test_size, gen.next_u64(), "test", options.train_size,
                             nullptr, &known);
  return corpus;
}

std::string translate_sentence(const std::string& english) {
  return join(spanish_words(parse_or_fail(english)));
}

std::string translate_noun_phrase(const std::string& english) {
  const Words tokens = tokenize(english);
  for (int n = 0; n < static_cast<int>(kNouns.size()); ++n)
    for (const NounPhrase& np : noun_phrases(n))
      if (english_noun_phrase(np) == tokens) return join(spanish_noun_phrase(np));
  fail("translation corpus: '", english, "' is not a noun phrase of the grammar");
}

std::string sentence_triple(const std::string& english) {
  const Sentence s = parse_or_fail(english);
  return triple_key(s.subject, s.verb, s.object.noun);
}

std::int64_t translation_triple_count() {
  return static_cast<std::int64_t>(all_triples().size());
}

}  // namespace uwaga
