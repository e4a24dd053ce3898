package main

import "strings"

// codeWords make identifiers, file and directory names. Commonest first:
// words are drawn with a skew towards the front, as in real code. They must
// never yield a planted token: no "main", "handler", "func", and nothing
// of corpus.RareLiteral.
var codeWords = strings.Fields(`
	get set new user id name data value config error context request
	response client server item list key type file path index count size
	len buf result node service manager info state status time start end
	read write update create delete load save parse format check validate
	init open close run stop message event token auth session cache store
	query filter sort map field record entry table row column schema model
	view page item order account payment price amount total limit offset
	default option options param params args input output source target
	result results handle process worker job task queue batch stream
	channel signal lock mutex group pool conn connection socket port host
	address url uri route router endpoint api http json xml yaml proto
	log logger level debug trace metric metrics counter gauge span
	header body content text line word char byte bytes string number int
	float bool flag mode kind version build release deploy env cluster
	region zone node pod container image volume disk memory cpu network
	policy rule role permission scope tenant org team member profile
	email phone address city country currency invoice customer product
	cart checkout shipping inventory stock warehouse vendor supplier
	report summary detail history audit event notify notification alert
	template render layout style theme color font icon button form input
	label dialog modal menu tab panel card grid cell header footer nav
	link anchor image media video audio upload download export import
	sync async await promise future callback hook effect reducer action
	dispatch selector store provider consumer factory builder adapter
	wrapper proxy gateway bridge registry resolver loader parser lexer
	scanner encoder decoder codec serializer marshal unmarshal hash sum
	digest sign verify encrypt decrypt key secret cert tls ssl cipher
	retry backoff timeout deadline interval delay tick clock timer cron
	schedule plan step stage phase pipeline graph tree edge vertex path
	walk visit apply merge split join concat append prepend insert remove
	find search match replace scan peek push pop shift swap reset clear
	flush commit rollback begin txn tx snapshot backup restore migrate
	seed fixture mock stub fake spec test bench assert expect want got
	min max avg mean median rate ratio score weight rank top bottom
	prev next first last head tail parent child children root leaf depth
	width height length area shape point rect circle line vector matrix
	local remote global shared private public internal external inner
	outer upper lower left right center north south east west primary
	secondary backup fallback legacy current pending active inactive
	enabled disabled visible hidden locked open closed valid invalid
`)

// proseWords make comments, documentation and string literals.
var proseWords = strings.Fields(`
	the of and to a in is it that for on with as this be are by at or
	from not we can if an when will which all each should must may
	returns value the new given used when before after until unless
	because so then also only any every other into over under between
	without within while where how what why who request response user
	data file error state time first last next previous current default
	note see also example usage deprecated todo fixme hack workaround
	handles calls reads writes updates creates deletes checks validates
	ensures keeps stores loads parses formats builds runs starts stops
	waits blocks returns reports logs records tracks counts limits
	caller callee client server service process thread goroutine task
	buffer queue cache index table list map set tree graph node edge
	safe unsafe concurrent use locked held released acquired closed
	open empty full nil null zero one two three many few some most
	fast slow large small long short high low true false always never
	order sorted unsorted stable unstable exact approximate partial full
	retry timeout deadline cancel cancelled expired valid invalid missing
	present required optional ignored skipped applied merged split
	configuration option flag environment variable setting parameter
	argument result output input path name key value entry record field
	`)

// goImports are imported by generated Go files.
var goImports = strings.Fields(`
	context errors fmt io os sort strings strconv sync time bytes bufio
	encoding/json net/http path/filepath regexp log/slog math unicode/utf8
	sync/atomic crypto/sha256 encoding/base64 io/fs os/exec
`)

// goTypes are parameter and field types in generated Go files.
var goTypes = strings.Fields(`
	string int int64 bool error []byte []string map[string]string
	time.Duration time.Time context.Context *http.Request io.Reader
	io.Writer float64 uint32 any *sync.Mutex []int map[string]int
`)

var tsTypes = strings.Fields(`
	string number boolean void unknown any Date string[] number[]
	Record<string,unknown> Promise<void> Map<string,number> Set<string>
`)

var javaTypes = strings.Fields(`
	String int long boolean double List<String> Map<String,Object>
	Optional<String> Object byte[] Instant Duration Set<Long>
`)

var rustTypes = strings.Fields(`
	String &str u32 u64 i64 usize bool f64 Vec<u8> Vec<String>
	Option<String> HashMap<String,String> &[u8] Duration
`)

var cTypes = strings.Fields(`
	int unsigned size_t char* const char* uint8_t* uint32_t uint64_t
	int64_t void* struct buffer* struct node* bool double ssize_t
`)

var pyImports = strings.Fields(`
	os sys json re time logging typing dataclasses pathlib collections
	itertools functools subprocess argparse datetime hashlib uuid
`)

// dirNamesCommon are the usual directory names of a monorepo, drawn before
// a random word. "internal" and "testdata" are chosen separately.
var dirNamesCommon = strings.Fields(`
	src lib pkg cmd api core util utils common server client handlers
	models services config tests docs scripts tools components hooks
	store views routes middleware auth db storage proto gen web ui assets
	i18n metrics tracing logging plugins adapters v1 v2 v3 types schema
	migrations jobs workers queue events cli sdk examples fixtures mocks
	app pages styles public static helpers controllers repository domain
`)

// topLevelDirs are the directories at the root of the generated tree.
var topLevelDirs = strings.Fields(`
	services libs apps tools platform infra docs third_party experimental
	proto web mobile data ml
`)
