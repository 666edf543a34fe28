package command

import (
	"errors"

	"github.com/hashicorp/nomad/api"
)

// responseStatus returns the HTTP status code of an API call that the
// agent answered with an error, or 0 when err did not come from an
// answer (a refused connection, a decoding error). Commands branch on
// it instead of on the text of the error.
func responseStatus(err error) int {
	var ure api.UnexpectedResponseError
	if errors.As(err, &ure) {
		return ure.StatusCode()
	}
	var pure *api.UnexpectedResponseError
	if errors.As(err, &pure) && pure != nil {
		return pure.StatusCode()
	}
	return 0
}
