job {
}
