package state

import (
	"fmt"

	"github.com/nomadq/nomadq/structs"
)

// UpdateJobStability marks a stored version of a job stable or not. The
// job itself changes too when the version is its current one. A version
// that is no longer kept is a not-found error.
func (s *StateStore) UpdateJobStability(index uint64, namespace, jobID string, version uint64, stable bool) error {
	return s.write(index, func(tx *writeTxn) error {
		raw, err := tx.First(TableJobVersion, "id", namespace, jobID, version)
		if err != nil {
			return fmt.Errorf("job %q version %d lookup: %w", jobID, version, err)
		}
		if raw == nil {
			return fmt.Errorf("job %q in namespace %q at version %d: %w", jobID, namespace, version, ErrNotFound)
		}
		stored := raw.(*structs.Job)
		if stored.Stable == stable {
			return nil
		}
		v := stored.Copy()
		v.Stable = stable
		v.ModifyIndex = tx.index
		if err := tx.Insert(TableJobVersion, v); err != nil {
			return fmt.Errorf("mark job %q version %d: %w", jobID, version, err)
		}
		tx.touch(TableJobVersion)

		current, err := jobByID(tx.Txn, nil, namespace, jobID)
		if err != nil {
			return err
		}
		if current == nil || current.Version != version {
			return nil
		}
		// The current job and its version row are separate copies; keep
		// them in step so that a re-register sees the new flag.
		j := current.Copy()
		j.Stable = stable
		j.ModifyIndex = tx.index
		if err := tx.Insert(TableJobs, j); err != nil {
			return fmt.Errorf("mark job %q: %w", jobID, err)
		}
		tx.touch(TableJobs)
		return nil
	})
}
