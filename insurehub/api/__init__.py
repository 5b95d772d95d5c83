"""The API kit every app's API uses: one page shape, one id check, one way to filter and search,
one set of error answers in the schema. Here, below the apps, so no app imports another's
views or privates for them."""
