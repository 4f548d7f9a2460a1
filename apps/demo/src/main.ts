console.log("demo placeholder");
