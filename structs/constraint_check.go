package structs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// allowedConstraintOperators is the list Validate quotes in its message.
const allowedConstraintOperators = "=, ==, is, !=, not, <, <=, >, >=, regexp, version, semver, " +
	"set_contains, set_contains_all, set_contains_any, distinct_hosts, distinct_property, is_set, is_not_set"

const allowedAffinityOperators = "=, ==, is, !=, not, <, <=, >, >=, regexp, version, semver, " +
	"set_contains, set_contains_all, set_contains_any"

// describeTargets renders "<ltarget> <operand> <rtarget>", leaving out empty parts.
func describeTargets(l, op, r string) string {
	parts := make([]string, 0, 3)
	for _, p := range []string{l, op, r} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// validateConstraint checks one constraint. taskLevel rejects the operands
// that only make sense across allocations.
func validateConstraint(c *Constraint, taskLevel bool) error {
	op := c.Operand
	needLTarget := true
	switch op {
	case "=", "==", "is", "!=", "not", ConstraintAttributeIsSet, ConstraintAttributeIsNotSet:
	case "<", "<=", ">", ">=":
		if c.RTarget == "" {
			return fmt.Errorf("value must not be empty for operator %q", op)
		}
	case ConstraintSetContains, ConstraintSetContainsAll, ConstraintSetContainsAny:
		if c.RTarget == "" {
			return fmt.Errorf("value must not be empty for operator %q: it lists the required items", op)
		}
	case ConstraintRegex:
		if _, err := regexp.Compile(c.RTarget); err != nil {
			return fmt.Errorf("value %q is not a valid regular expression: %v", c.RTarget, err)
		}
	case ConstraintVersion, ConstraintSemver:
		if err := checkVersionConstraint(c.RTarget, op == ConstraintSemver); err != nil {
			return fmt.Errorf("value %q is not a valid %s constraint: %v", c.RTarget, op, err)
		}
	case ConstraintDistinctHosts:
		needLTarget = false
		if taskLevel {
			return fmt.Errorf("operator %q is not allowed on a task: use it on the job or group", op)
		}
	case ConstraintDistinctProperty:
		if taskLevel {
			return fmt.Errorf("operator %q is not allowed on a task: use it on the job or group", op)
		}
		if c.RTarget != "" {
			if n, err := strconv.ParseUint(c.RTarget, 10, 64); err != nil || n == 0 {
				return fmt.Errorf("value %q is not allowed for operator %q: must be a positive integer (allocations per value)", c.RTarget, op)
			}
		}
	default:
		return fmt.Errorf("operator %q is not allowed: must be one of %s", op, allowedConstraintOperators)
	}
	if needLTarget && c.LTarget == "" {
		return fmt.Errorf("attribute must not be empty for operator %q", op)
	}
	return nil
}

// validateAffinity checks one affinity's operator, targets and weight.
func validateAffinity(a *Affinity) error {
	var errs MultiError
	switch a.Operand {
	case "=", "==", "is", "!=", "not":
	case "<", "<=", ">", ">=", ConstraintSetContains, ConstraintSetContainsAll, ConstraintSetContainsAny:
		if a.RTarget == "" {
			errs.Add(fmt.Errorf("value must not be empty for operator %q", a.Operand))
		}
	case ConstraintRegex:
		if _, err := regexp.Compile(a.RTarget); err != nil {
			errs.Add(fmt.Errorf("value %q is not a valid regular expression: %v", a.RTarget, err))
		}
	case ConstraintVersion, ConstraintSemver:
		if err := checkVersionConstraint(a.RTarget, a.Operand == ConstraintSemver); err != nil {
			errs.Add(fmt.Errorf("value %q is not a valid %s constraint: %v", a.RTarget, a.Operand, err))
		}
	default:
		errs.Add(fmt.Errorf("operator %q is not allowed: must be one of %s", a.Operand, allowedAffinityOperators))
	}
	if a.LTarget == "" {
		errs.Add(fmt.Errorf("attribute must not be empty"))
	}
	if a.Weight == 0 || a.Weight < -100 || a.Weight > 100 {
		errs.Add(fmt.Errorf("weight %d is not allowed: must be between -100 and 100 and not 0", a.Weight))
	}
	return errs.ErrorOrNil()
}

// checkVersionConstraint parses the value of a version or semver
// constraint the way the scheduler will, so that a job is refused at
// submission rather than left unplaceable.
func checkVersionConstraint(s string, semver bool) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("it is empty")
	}
	_, err := ParseVersionConstraint(s, semver)
	return err
}
