package tf
