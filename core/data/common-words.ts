/**
 * The 1,000 most frequent English words (lowercase, letters only, at least two letters), used to
 * keep ordinary sentence-initial words out of capitalised-entity detection (docs/palace-behaviour.md §4.8).
 * Derived from the frequency ranking of the wordfreq 3.1.1 package (data CC BY-SA 4.0, Robyn Speer),
 * with proper nouns, calendar names, abbreviations and profanity removed.
 */
export const COMMON_WORDS: ReadonlySet<string> = new Set(`
the to and of in is for that you it on with this was be as are have at he not by but from my or we
an your all so his they me if one can will just like about up out what has when more do no were who
had their there her which time get been would she new people how some also them now other its our
than good only after first him into know see two make over think any then could back these us want
because go well said way most much very where even should here need really did right work year
years being day too going before off why made still take got many never those life say world down
great through last while best such love man home long look something use same used both every am
come part state three around between always better find help high little old since another does own
things under during game thing give house place school again next each without against end found
must show big feel sure team ever family keep might please put money free second someone away left
number city days lot name night play until company doing few let real called different having set
thought done however getting government group looking public top women business care start system
times week already anything case nothing person today change enough everything full live making
point read told yet bad four hard mean once support tell including music power seen states stop
water based believe call head men national small took white came far job side though try went yes
actually later less line order party run says service country open season thank children everyone
general trying united using area black following law makes together war whole car face five kind
maybe per president story working course games health hope important least means news within able
book early friends information local post thanks video young ago others social talk court fact
given guys half hand level mind often single become body coming control death food guy hours office
pay problem south true almost history known large lost research room several started taking
university win wrong along anyone else girl matter pretty remember air bit friend hit needs nice
playing probably saying understand yeah class close comes idea international looks past possible
wanted cause due happy human members months move question series wait woman ask community data late
leave north saw special watch either future light low million morning police short stay taken age
buy deal rather reason red report soon third turn whether among check development form further
heart minutes myself services yourself act although asked child fire fun living major media phone
players art behind building easy market near non plan political quite six talking west works
according available education final former front kids list ready sometimes son street bring college
current example experience heard meet program type baby chance father process song study word
across action clear gave gets himself month outside self students words board cost cut field held
instead main moment mother road seems thinking town wants department energy fight fine force hear
issue played points price rest results running shows space summer term wife beautiful date goes
killed land miss project sex shot site strong account especially eyes include parents period
position record similar total above club common died film happened knew lead likely military
perfect personal security share won center county couple dead happen hold industry inside issues
online player private problems return rights sense star test view weeks break companies event
higher hour member middle needed present result sorry takes training wish answer boy design finally
girls gold gone guess interest king learn policy society added alone average bank brought certain
church east hands hot longer medical movie original park performance press received role sent
themselves tried worked worth areas became bill books cool director exactly giving ground meeting
provide questions relationship sound source usually value evidence follow lives official production
rate reading round save stand stuff tax whatever amount blue countries drive eat fall fast federal
feeling felt green league management match model picture size step trust central changes forward
groups hey key mom page paid range review science trade upon various attention brother cannot
character chief cup football hate led looked lower natural property quality send style vote amazing
blood complete dog economic involved itself language lord oil related serious stage terms title add
article attack born decided decision enjoy entire kill met perhaps poor release situation
technology turned website written choice code considered continue council cover currently door
election events financial foreign hair increase legal lose pick race seem seven sign simple simply
staff super union walk bed began built career changed crazy daily daughter die difficult figure
hospital knows loss modern ones paper parts popular published safe starting systems version voice
whose writing army earth forget goal huge internet listen okay practice rules sea sir success
towards waiting ways access base below created deep followed mark missing offer pass professional
released risk schools sleep table ten truth ball box build card cases dark district mine minister
note percent piece products recent seeing straight visit wall wrote allowed boys culture fans gives
growth included married officer pain places respect response river rock shall speak specific
standard tonight write album century charge cold create effect eight except eye funny limited
moving network peace provided recently required sales spent store student tomorrow track via
watching weight addition ahead allow anti association beat brown capital committee conference
difference double expect gas island moved normal plans population potential pressure radio station
text treatment western beginning campaign certainly completely content credit cross described
despite female focus hi husband ice individual interesting join kept leading loved message miles
nearly particular previous quickly region reported section sort speed travel consider contact drop
fair feet kid link positive sale throughout tour welcome absolutely additional beyond conditions
earlier extra forces immediately jobs
`.split(/\s+/).filter((w) => w !== ''));
