package structs

// Contexts that only fuzzy search fills: the parts of a job it matches.
const (
	SearchContextGroups   = "groups"
	SearchContextTasks    = "tasks"
	SearchContextServices = "services"
	SearchContextCommands = "commands"
	SearchContextImages   = "images"
	SearchContextClasses  = "classes"
)

// Fuzzy search limits, Nomad's defaults: the shortest term, how many
// objects of each kind are examined, how many matches of a context are
// kept.
const (
	FuzzyMinTermLength = 2
	FuzzyLimitQuery    = 20
	FuzzyLimitResults  = 100
)

// FuzzySearchRequest searches names for Text, case-insensitively.
type FuzzySearchRequest struct {
	Text    string
	Context string
	QueryOptions
}

// FuzzyMatch is one match: the matched name and where it lives (for a
// task: namespace, job, group).
type FuzzyMatch struct {
	ID    string
	Scope []string
}

// FuzzySearchResponse answers Search.FuzzySearch.
type FuzzySearchResponse struct {
	Matches     map[string][]FuzzyMatch
	Truncations map[string]bool
	QueryMeta
}
