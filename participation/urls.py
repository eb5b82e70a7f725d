from django.urls import path

from participation import views

app_name = "surveys"
urlpatterns = [
    path("<slug:slug>/", views.start, name="start"),
    path("<slug:slug>/consent/", views.consent, name="consent"),
    path("<slug:slug>/page/", views.page, name="page"),
    path("<slug:slug>/done/", views.done, name="done"),
    path("<slug:slug>/declined/", views.declined, name="declined"),
    path("<slug:slug>/withdraw/", views.withdraw, name="withdraw"),
    path("<slug:slug>/withdrawn/", views.withdrawn, name="withdrawn"),
]
